import { Hono } from 'hono';
import { z } from 'zod';
import { readJson } from '../api-kit/body.ts';
import type { ApiContext, AppEnv } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import type { WorkerDomainService } from './domains.ts';
import { ROUTE_VALIDATION_CODE } from './errors.ts';
import { renderRoute, type WorkerRouteService } from './service.ts';

const json = (c: ApiContext) => readJson(c, z.unknown(), { code: ROUTE_VALIDATION_CODE });

/**
 * `/zones/{zone_id}/workers/routes` (the SDK's workers.routes), `/accounts/{a}/workers/domains` (workers.domains),
 * and the calls `wrangler deploy` makes for `routes`: the script's routes, and its Custom Domains' changeset
 * and records. HTTP only; the rules live in the services.
 */
export function workerRouteApi(routes: WorkerRouteService, domains: WorkerDomainService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const zoneBase = '/zones/:zone_id/workers/routes';
  const zone = (c: ApiContext) => c.req.param('zone_id')!;
  const principal = (c: ApiContext) => c.get('principal');

  app.get(zoneBase, async (c) => ok(c, (await routes.list(principal(c), zone(c))).map(renderRoute)));
  app.post(zoneBase, async (c) => ok(c, renderRoute(await routes.create(principal(c), zone(c), await json(c)))));
  app.get(`${zoneBase}/:route_id`, async (c) =>
    ok(c, renderRoute(await routes.get(principal(c), zone(c), c.req.param('route_id')))),
  );
  app.put(`${zoneBase}/:route_id`, async (c) =>
    ok(c, renderRoute(await routes.update(principal(c), zone(c), c.req.param('route_id'), await json(c)))),
  );
  app.delete(`${zoneBase}/:route_id`, async (c) =>
    ok(c, await routes.delete(principal(c), zone(c), c.req.param('route_id'))),
  );

  const workers = '/accounts/:account_id/workers';
  const account = (c: ApiContext) => c.req.param('account_id')!;
  const script = (c: ApiContext) => c.req.param('script')!;

  app.get(`${workers}/scripts/:script/routes`, async (c) =>
    ok(
      c,
      (await routes.scriptRoutes(account(c), script(c))).map((r) => ({ ...renderRoute(r), script: script(c) })),
    ),
  );
  app.put(`${workers}/scripts/:script/routes`, async (c) =>
    ok(c, await routes.replaceScriptRoutes(account(c), script(c), await json(c))),
  );
  app.post(`${workers}/scripts/:script/domains/changeset`, async (c) =>
    ok(c, await domains.changeset(account(c), script(c), await json(c), c.req.query('replace_state') === 'true')),
  );
  app.put(`${workers}/scripts/:script/domains/records`, async (c) =>
    ok(c, await domains.replaceScriptDomains(account(c), script(c), await json(c))),
  );

  const list = async (c: ApiContext) => {
    const found = await domains.list(account(c), {
      hostname: c.req.query('hostname'),
      service: c.req.query('service'),
      zone_id: c.req.query('zone_id'),
      zone_name: c.req.query('zone_name'),
      environment: c.req.query('environment'),
    });
    return ok(c, await Promise.all(found.map((d) => domains.render(d))));
  };
  app.get(`${workers}/domains`, list);
  app.get(`${workers}/domains/records`, list);
  app.put(`${workers}/domains`, async (c) =>
    ok(c, await domains.render(await domains.attach(account(c), await json(c)))),
  );
  app.get(`${workers}/domains/records/:domain_id`, async (c) =>
    ok(c, await domains.render(await domains.get(account(c), c.req.param('domain_id')))),
  );
  app.get(`${workers}/domains/:domain_id`, async (c) =>
    ok(c, await domains.render(await domains.get(account(c), c.req.param('domain_id')))),
  );
  app.delete(`${workers}/domains/:domain_id`, async (c) => {
    await domains.detach(account(c), c.req.param('domain_id'));
    return ok(c, null);
  });

  return app;
}
