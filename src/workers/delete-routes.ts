import type { Hono } from 'hono';
import type { ApiContext, AppEnv } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import { scriptReferences } from './script-references.ts';
import type { WorkersService } from './service.ts';

/** `force=true` (or `1`); any other value, or none, is false. */
function forced(c: ApiContext): boolean {
  const raw = c.req.query('force');
  return raw === 'true' || raw === '1';
}

/**
 * Deleting a Worker as `wrangler delete` does it: the dependency check (`/references`,
 * `/tails/by-consumer/{name}`), the delete itself on the service (`DELETE /workers/services/{name}?force=`)
 * or the script resource (a Worker other Workers are bound to, as a tail or a service, only with `force`),
 * then the look-ups it makes around it (KV namespaces for a Workers Site's assets, src/kv; Durable Object
 * namespaces, durable-objects/routes.ts).
 */
export function mountDeleteRoutes(app: Hono<AppEnv>, workers: WorkersService): void {
  const base = '/accounts/:account_id/workers';
  const account = (c: ApiContext) => c.req.param('account_id')!;
  const script = (c: ApiContext) => c.req.param('script')!;
  const remove = async (c: ApiContext) => {
    await workers.deleteScript(account(c), script(c), forced(c));
    return ok(c, null);
  };
  app.delete(`${base}/scripts/:script`, remove);
  app.delete(`${base}/services/:script`, remove);
  app.get(`${base}/scripts/:script/references`, async (c) => {
    const { incoming, outgoing } = await workers.serviceReferences(account(c), script(c));
    return ok(c, scriptReferences(incoming, outgoing));
  });
  app.get(`${base}/tails/by-consumer/:script`, async (c) => ok(c, await workers.tailProducers(account(c), script(c))));
}
