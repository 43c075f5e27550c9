import { Hono } from 'hono';
import { z } from 'zod';
import { readJson } from '../api-kit/body.ts';
import type { AppEnv, ApiContext } from '../api-kit/context.ts';
import { pageInfo, parsePagination, type PageRequest } from '../api-kit/pagination.ts';
import { ok } from '../api-kit/respond.ts';
import { isLedgeError } from '../shared/errors.ts';
import { LB_VALIDATION_CODE, LbErrors } from './errors.ts';
import type { LoadBalancing } from './service.ts';

/** Page size: 25 by default as on Cloudflare; up to 1000 per page (page/per_page and limit/offset alike). */
export const POOL_PAGING = { defaultPerPage: 25, maxPerPage: 1000, code: LB_VALIDATION_CODE } as const;

/** `/accounts/{account_id}/load_balancers/...`: pools, monitors, previews. HTTP only; rules live in the services. */
export function loadBalancingRoutes(lb: LoadBalancing): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const account = (c: ApiContext) => c.req.param('account_id') ?? '';

  app.get('/pools', async (c) => {
    const page = paging(c);
    const { pools, total } = await lb.pools.list(account(c), page, c.req.query('monitor') || undefined);
    return ok(c, pools, { resultInfo: pageInfo(page, pools.length, total) });
  });
  app.post('/pools', async (c) => ok(c, await lb.pools.create(account(c), await readLbBody(c))));
  app.patch('/pools', async (c) => {
    const page = paging(c);
    const { pools, total, messages } = await lb.pools.bulkPatch(account(c), page, await readLbBody(c));
    return ok(c, pools, { resultInfo: pageInfo(page, pools.length, total), messages });
  });
  app.get('/pools/:pool_id', async (c) => ok(c, await lb.pools.get(account(c), c.req.param('pool_id'))));
  app.put('/pools/:pool_id', async (c) =>
    ok(c, await lb.pools.replace(account(c), c.req.param('pool_id'), await readLbBody(c))),
  );
  app.patch('/pools/:pool_id', async (c) =>
    ok(c, await lb.pools.patch(account(c), c.req.param('pool_id'), await readLbBody(c))),
  );
  app.delete('/pools/:pool_id', async (c) => ok(c, await lb.pools.delete(account(c), c.req.param('pool_id'))));
  app.get('/pools/:pool_id/health', async (c) => ok(c, await lb.poolHealth(account(c), c.req.param('pool_id'))));
  app.get('/pools/:pool_id/health/history', async (c) =>
    ok(c, await lb.poolHealthHistory(account(c), c.req.param('pool_id'), c.req.query('range') ?? 'hour')),
  );
  app.get('/pools/:pool_id/references', async (c) =>
    ok(c, await lb.pools.references(account(c), c.req.param('pool_id'))),
  );
  app.post('/pools/:pool_id/preview', async (c) => {
    const poolId = c.req.param('pool_id');
    await lb.pools.get(account(c), poolId); // unknown pool: 404 before the body is judged
    return ok(c, await lb.previewPool(account(c), poolId, await readLbBody(c, {})));
  });
  app.get('/preview/:preview_id', async (c) => ok(c, await lb.getPreview(account(c), c.req.param('preview_id'))));

  app.get('/monitors', async (c) => ok(c, await lb.monitors.list(account(c))));
  app.post('/monitors', async (c) => ok(c, await lb.monitors.create(account(c), await readLbBody(c, {}))));
  app.get('/monitors/:monitor_id', async (c) => ok(c, await lb.monitors.get(account(c), c.req.param('monitor_id'))));
  app.put('/monitors/:monitor_id', async (c) =>
    ok(c, await lb.monitors.replace(account(c), c.req.param('monitor_id'), await readLbBody(c, {}))),
  );
  app.patch('/monitors/:monitor_id', async (c) =>
    ok(c, await lb.monitors.patch(account(c), c.req.param('monitor_id'), await readLbBody(c, {}))),
  );
  app.delete('/monitors/:monitor_id', async (c) =>
    ok(c, await lb.monitors.delete(account(c), c.req.param('monitor_id'))),
  );
  app.get('/monitors/:monitor_id/references', async (c) =>
    ok(c, await lb.monitors.references(account(c), c.req.param('monitor_id'))),
  );
  app.post('/monitors/:monitor_id/preview', async (c) => {
    const monitorId = c.req.param('monitor_id');
    await lb.monitors.get(account(c), monitorId);
    return ok(c, await lb.previewMonitor(account(c), monitorId, await readLbBody(c, {})));
  });

  return app;
}

/** Shared pagination, with load balancing's "...: validation failed" wording. */
function paging(c: ApiContext): PageRequest {
  return asValidation(() => parsePagination(c.req.query(), POOL_PAGING));
}

/** The JSON body (any content type); malformed JSON is a 1002 like any other validation failure. */
export async function readLbBody(c: ApiContext, emptyAs?: unknown): Promise<unknown> {
  try {
    return await readJson(c, z.unknown(), { code: LB_VALIDATION_CODE, emptyAs });
  } catch (error) {
    if (isLedgeError(error) && error.code === LB_VALIDATION_CODE) throw LbErrors.validation(error.message);
    throw error;
  }
}

function asValidation<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (isLedgeError(error) && error.code === LB_VALIDATION_CODE) throw LbErrors.validation(error.message);
    throw error;
  }
}
