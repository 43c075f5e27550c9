import { Hono } from 'hono';
import type { Principal } from '../../accounts/index.ts';
import type { AppEnv, ApiContext } from '../../api-kit/context.ts';
import { ok } from '../../api-kit/respond.ts';
import { readLbBody } from '../routes.ts';
import type { LoadBalancerAnswer, LoadBalancerService, LoadBalancerZone } from './service.ts';

/** Finds the zone of `/zones/{zone_id}/...` for the caller, or throws the unknown-zone error (zones subsystem). */
export type ZoneResolver = (principal: Principal, zoneId: string) => Promise<LoadBalancerZone>;

/** `/zones/{zone_id}/load_balancers[/{id}]`. HTTP only; the rules live in LoadBalancerService. */
export function loadBalancerRoutes(loadBalancers: LoadBalancerService, resolveZone: ZoneResolver): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const zone = (c: ApiContext) => resolveZone(c.get('principal'), c.req.param('zone_id') ?? '');
  const answer = (c: ApiContext, result: LoadBalancerAnswer) =>
    ok(c, result.loadBalancer, { messages: result.messages });

  app.get('/', async (c) => {
    const found = await loadBalancers.list(await zone(c));
    return ok(c, found, {
      resultInfo: { page: 1, per_page: found.length, count: found.length, total_count: found.length, total_pages: 1 },
    });
  });
  app.post('/', async (c) => {
    const where = await zone(c); // unknown zone: 404 before the body is judged
    return answer(c, await loadBalancers.create(where, await readLbBody(c)));
  });
  app.get('/:load_balancer_id', async (c) =>
    ok(c, await loadBalancers.get(await zone(c), c.req.param('load_balancer_id'))),
  );
  app.put('/:load_balancer_id', async (c) => {
    const where = await zone(c);
    return answer(c, await loadBalancers.replace(where, c.req.param('load_balancer_id'), await readLbBody(c)));
  });
  app.patch('/:load_balancer_id', async (c) => {
    const where = await zone(c);
    return answer(c, await loadBalancers.patch(where, c.req.param('load_balancer_id'), await readLbBody(c)));
  });
  app.delete('/:load_balancer_id', async (c) =>
    ok(c, await loadBalancers.delete(await zone(c), c.req.param('load_balancer_id'))),
  );
  return app;
}
