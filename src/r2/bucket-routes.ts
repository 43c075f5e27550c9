import { Hono } from 'hono';
import { z } from 'zod';
import { readJson } from '../api-kit/body.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import { LedgeError } from '../shared/errors.ts';
import { STORAGE_CLASSES, type StorageClass, type StorageService } from '../storage/index.ts';
import { renderBucket } from './render.ts';

const VALIDATION_CODE = 10040;

export const CreateBucketSchema = z.object({
  name: z.string(),
  locationHint: z.string().optional(),
  storageClass: z.enum(STORAGE_CLASSES).optional(),
});

export const PatchBucketSchema = z.object({ storage_class: z.enum(STORAGE_CLASSES).optional() });

/** `/accounts/{a}/r2/buckets`: create, list, get, patch, delete (R2's control plane, wrangler's view). */
export function bucketRoutes(storage: StorageService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.post('/accounts/:account_id/r2/buckets', async (c) => {
    // wrangler sends this JSON labelled text/plain; readJson parses it whatever the content type.
    const body = await readJson(c, CreateBucketSchema, { code: VALIDATION_CODE });
    const bucket = await storage.buckets.create(c.req.param('account_id'), {
      name: body.name,
      locationHint: body.locationHint,
      storageClass: body.storageClass,
      jurisdiction: c.req.header('cf-r2-jurisdiction'),
    });
    return ok(c, renderBucket(bucket));
  });

  app.get('/accounts/:account_id/r2/buckets', async (c) => {
    const query = c.req.query();
    const perPage = parsePerPage(query['per_page']);
    const direction = query['direction'] ?? 'asc';
    if (direction !== 'asc' && direction !== 'desc') throw invalid('direction must be asc or desc');
    if (query['order'] !== undefined && query['order'] !== 'name') throw invalid('order must be name');
    const { buckets, cursor } = await storage.buckets.list(c.req.param('account_id'), {
      nameContains: query['name_contains'] || undefined,
      startAfter: query['start_after'] || undefined,
      cursor: query['cursor'] || undefined,
      direction,
      perPage,
    });
    return ok(
      c,
      { buckets: buckets.map(renderBucket) },
      { resultInfo: { per_page: perPage, ...(cursor ? { cursor } : {}) } },
    );
  });

  app.get('/accounts/:account_id/r2/buckets/:bucket_name', async (c) => {
    const bucket = await storage.buckets.require(c.req.param('account_id'), c.req.param('bucket_name'));
    return ok(c, renderBucket(bucket));
  });

  app.patch('/accounts/:account_id/r2/buckets/:bucket_name', async (c) => {
    // R2 takes the new default storage class from a header; a JSON body is accepted too.
    const body = await readJson(c, PatchBucketSchema, { code: VALIDATION_CODE, emptyAs: {} });
    const header = c.req.header('cf-r2-storage-class');
    if (header !== undefined && !(STORAGE_CLASSES as readonly string[]).includes(header)) {
      throw invalid(`cf-r2-storage-class must be one of ${STORAGE_CLASSES.join(', ')}`);
    }
    const storageClass = (header as StorageClass | undefined) ?? body.storage_class;
    const bucket = await storage.buckets.update(
      c.req.param('account_id'),
      c.req.param('bucket_name'),
      storageClass ? { storageClass } : {},
    );
    return ok(c, renderBucket(bucket));
  });

  app.delete('/accounts/:account_id/r2/buckets/:bucket_name', async (c) => {
    await storage.buckets.delete(c.req.param('account_id'), c.req.param('bucket_name'));
    return ok(c, {});
  });

  return app;
}

function parsePerPage(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 20;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 1000)
    throw invalid(`per_page must be an integer from 1 to 1000, got "${raw}"`);
  return Number(raw);
}

function invalid(message: string): LedgeError {
  return new LedgeError(400, VALIDATION_CODE, message);
}
