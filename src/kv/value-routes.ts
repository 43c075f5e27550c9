import { Hono } from 'hono';
import { limitedRequest, readBodyBytes, readJson } from '../api-kit/body.ts';
import type { ApiContext, AppEnv } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import { KvCodes, KvErrors } from './errors.ts';
import { KV_LIMITS } from './limits.ts';
import { BulkDeleteSchema, BulkGetSchema, BulkWriteSchema } from './schemas.ts';
import type { KvService } from './service.ts';

const NAMESPACE = '/accounts/:account_id/storage/kv/namespaces/:namespace_id';
/** Room for a multipart body's boundaries and its metadata part around the largest value. */
const MULTIPART_SLACK = 64 * 1024;

/** A namespace's keys: values, metadata, the key list and the bulk calls, as wrangler and the SDK send them. */
export function valueRoutes(kv: KvService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const ids = (c: ApiContext) => [c.req.param('account_id')!, c.req.param('namespace_id')!] as const;

  app.get(`${NAMESPACE}/values/:key{.+}`, async (c) => {
    const { value } = await kv.get(...ids(c), c.req.param('key'));
    return c.body(value as Uint8Array<ArrayBuffer>, 200, { 'content-type': 'application/octet-stream' });
  });

  app.put(`${NAMESPACE}/values/:key{.+}`, async (c) => {
    const { value, metadata } = await readValue(c);
    await kv.put(...ids(c), c.req.param('key'), value, {
      expiration: c.req.query('expiration') || undefined,
      expirationTtl: c.req.query('expiration_ttl') || undefined,
      metadata,
    });
    return ok(c, {});
  });

  app.delete(`${NAMESPACE}/values/:key{.+}`, async (c) => {
    await kv.deleteKey(...ids(c), c.req.param('key'));
    return ok(c, {});
  });

  app.get(`${NAMESPACE}/metadata/:key{.+}`, async (c) => {
    return ok(c, await kv.metadata(...ids(c), c.req.param('key')));
  });

  app.get(`${NAMESPACE}/keys`, async (c) => {
    const limitText = c.req.query('limit');
    const limit = limitText === undefined || limitText === '' ? KV_LIMITS.maxListLimit : Number(limitText);
    if (!Number.isInteger(limit) || limit < KV_LIMITS.minListLimit || limit > KV_LIMITS.maxListLimit) {
      throw KvErrors.invalid(`limit must be an integer from ${KV_LIMITS.minListLimit} to ${KV_LIMITS.maxListLimit}`);
    }
    const page = await kv.listKeys(...ids(c), {
      prefix: c.req.query('prefix') || undefined,
      cursor: c.req.query('cursor') || undefined,
      limit,
    });
    return ok(c, page.keys, { resultInfo: { count: page.keys.length, cursor: page.cursor } });
  });

  app.put(`${NAMESPACE}/bulk`, async (c) => {
    const pairs = await readJson(c, BulkWriteSchema, { code: KvCodes.invalidInput, limit: KV_LIMITS.maxBulkBodyBytes });
    const { written, failed } = await kv.bulkPut(...ids(c), pairs);
    return ok(c, { successful_key_count: written, unsuccessful_keys: failed });
  });

  const bulkDelete = async (c: ApiContext) => {
    const keys = await readJson(c, BulkDeleteSchema, { code: KvCodes.invalidInput });
    const deleted = await kv.bulkDelete(...ids(c), keys);
    return ok(c, { successful_key_count: deleted, unsuccessful_keys: [] });
  };
  // wrangler sends DELETE /bulk; the SDK POST /bulk/delete.
  app.delete(`${NAMESPACE}/bulk`, bulkDelete);
  app.post(`${NAMESPACE}/bulk/delete`, bulkDelete);

  app.post(`${NAMESPACE}/bulk/get`, async (c) => {
    const request = await readJson(c, BulkGetSchema, { code: KvCodes.invalidInput });
    return ok(c, { values: await kv.bulkGet(...ids(c), request) });
  });

  return app;
}

/** A value as wrangler and the SDK send it: the body itself, or multipart `value` (+ `metadata` as JSON). */
async function readValue(c: ApiContext): Promise<{ value: Uint8Array; metadata: string | undefined }> {
  const type = c.req.header('content-type') ?? '';
  const tooLarge = () => KvErrors.tooLarge(`value length exceeds limit of ${KV_LIMITS.maxValueBytes}`);
  if (!type.toLowerCase().startsWith('multipart/form-data')) {
    return { value: await readBodyBytes(c, KV_LIMITS.maxValueBytes).catch(rethrowAs(tooLarge)), metadata: undefined };
  }
  let form: FormData;
  try {
    form = await limitedRequest(c, KV_LIMITS.maxValueBytes + MULTIPART_SLACK, tooLarge).formData();
  } catch (error) {
    if (error instanceof Error && 'code' in error) throw error;
    throw KvErrors.invalid('the multipart body could not be read');
  }
  const value = form.get('value');
  if (value === null) throw KvErrors.invalid('the multipart body has no value part');
  const bytes = typeof value === 'string' ? new TextEncoder().encode(value) : new Uint8Array(await value.arrayBuffer());
  const metadata = form.get('metadata');
  const metadataText = metadata === null ? undefined : typeof metadata === 'string' ? metadata : await metadata.text();
  return { value: bytes, metadata: metadataText };
}

/** readBodyBytes refuses with the platform's generic 413; KV's carries KV's code. */
function rethrowAs(make: () => Error) {
  return (error: unknown): never => {
    if ((error as { status?: number } | null)?.status === 413) throw make();
    throw error;
  };
}
