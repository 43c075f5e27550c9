import { Readable } from 'node:stream';
import { Hono } from 'hono';
import { z } from 'zod';
import { limitedBody, readJson } from '../api-kit/body.ts';
import type { ApiContext, AppEnv } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import { R2_LIMITS, R2Errors, type StorageService } from '../storage/index.ts';
import { renderUploadedObject } from './render.ts';

const CODE = { code: 10040 } as const;
const CreateSchema = z.strictObject({ key: z.string().min(1), content_type: z.string().max(1024).optional() });
const CompleteSchema = z.strictObject({
  parts: z.array(z.strictObject({ part_number: z.number().int(), etag: z.string() })).max(R2_LIMITS.maxParts),
});

/**
 * Multipart uploads on the /client/v4 object API (a Ledge extension: Cloudflare offers multipart through the
 * S3 API and the binding only). `ledge object put` sends a large file in parts with bounded memory, and can
 * abort cleanly. The key travels in the body or the query, since keys may contain slashes.
 */
export function uploadRoutes(storage: StorageService, metrics?: LedgeMetrics): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const base = '/accounts/:account_id/r2/buckets/:bucket_name/uploads';
  const bucketOf = (c: ApiContext) => storage.buckets.require(c.req.param('account_id')!, c.req.param('bucket_name')!);
  const keyOf = (c: ApiContext) => {
    const key = c.req.query('key');
    if (!key) throw R2Errors.invalidArgument('the query parameter "key" (the object key) is required');
    return key;
  };

  app.post(base, async (c) => {
    const input = await readJson(c, CreateSchema, CODE);
    const upload = await storage.multipart.create(await bucketOf(c), input.key, {
      httpMetadata: input.content_type ? { contentType: input.content_type } : {},
    });
    return ok(c, { upload_id: upload.uploadId, key: upload.key });
  });

  app.put(`${base}/:upload_id/parts/:part_number`, async (c) => {
    const length = c.req.header('content-length');
    const body = (limitedBody(c, R2_LIMITS.maxPartBytes, R2Errors.entityTooLarge) ??
      Readable.from([])) as AsyncIterable<Uint8Array>;
    const part = await storage.multipart.uploadPart(
      await bucketOf(c),
      keyOf(c),
      c.req.param('upload_id'),
      Number(c.req.param('part_number')),
      body,
      length === undefined ? undefined : Number(length),
    );
    return ok(c, { part_number: part.partNumber, etag: part.etag });
  });

  app.post(`${base}/:upload_id/complete`, async (c) => {
    const { parts } = await readJson(c, CompleteSchema, CODE);
    const object = await storage.multipart.complete(
      await bucketOf(c),
      keyOf(c),
      c.req.param('upload_id'),
      parts.map((p) => ({ partNumber: p.part_number, etag: p.etag })),
    );
    metrics?.r2('put', 'api', object.size);
    return ok(c, renderUploadedObject(object));
  });

  app.delete(`${base}/:upload_id`, async (c) => {
    await storage.multipart.abort(await bucketOf(c), keyOf(c), c.req.param('upload_id'));
    return ok(c, null);
  });
  return app;
}
