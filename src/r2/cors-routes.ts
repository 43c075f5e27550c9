import { Hono } from 'hono';
import { readJson } from '../api-kit/body.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import { CorsPutSchema, R2Errors, type StorageService } from '../storage/index.ts';

const VALIDATION_CODE = 10040;

/**
 * `/accounts/{a}/r2/buckets/{b}/cors`: read, replace or remove a bucket's CORS rules (what `wrangler r2
 * bucket cors list|set|delete` and the SDK's `r2.buckets.cors` call). A bucket without a configuration
 * answers 404 10059 as R2 does; one set to an empty list answers `{ rules: [] }`.
 */
export function corsRoutes(storage: StorageService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const path = '/accounts/:account_id/r2/buckets/:bucket_name/cors';

  app.get(path, async (c) => {
    const rules = await storage.cors.get(c.req.param('account_id'), c.req.param('bucket_name'));
    if (!rules) throw R2Errors.noSuchCorsConfiguration();
    return ok(c, { rules });
  });

  app.put(path, async (c) => {
    const body = await readJson(c, CorsPutSchema, { code: VALIDATION_CODE });
    await storage.cors.put(c.req.param('account_id'), c.req.param('bucket_name'), body.rules ?? []);
    return ok(c, {});
  });

  app.delete(path, async (c) => {
    await storage.cors.delete(c.req.param('account_id'), c.req.param('bucket_name'));
    return ok(c, {});
  });

  return app;
}
