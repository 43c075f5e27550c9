import { Hono } from 'hono';
import { readJson } from '../api-kit/body.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import { LifecyclePutSchema, type LifecycleRule, type StorageService } from '../storage/index.ts';

const VALIDATION_CODE = 10040;

/** `/accounts/{a}/r2/buckets/{b}/lifecycle`: read or replace a bucket's object lifecycle rules. */
export function lifecycleRoutes(storage: StorageService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const path = '/accounts/:account_id/r2/buckets/:bucket_name/lifecycle';

  app.get(path, async (c) => {
    const rules = await storage.lifecycle.get(c.req.param('account_id'), c.req.param('bucket_name'));
    return ok(c, { rules: rules.map(renderRule) });
  });

  app.put(path, async (c) => {
    const body = await readJson(c, LifecyclePutSchema, { code: VALIDATION_CODE });
    await storage.lifecycle.put(c.req.param('account_id'), c.req.param('bucket_name'), body.rules ?? []);
    return ok(c, {});
  });

  return app;
}

/** As R2 shows a rule: the prefix condition always present ("" for every object). */
function renderRule(rule: LifecycleRule): LifecycleRule {
  return { ...rule, conditions: { prefix: rule.conditions?.prefix ?? '' } };
}
