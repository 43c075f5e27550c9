import type { Hono } from 'hono';
import type { ApiContext, AppEnv } from '../../api-kit/context.ts';
import { pageOf, parsePagination } from '../../api-kit/pagination.ts';
import { ok } from '../../api-kit/respond.ts';
import { LedgeError } from '../../shared/errors.ts';
import { DurableObjectErrors } from './errors.ts';
import type { NamespaceRecord } from './schemas.ts';
import type { DurableObjectsService } from './service.ts';

/** Cloudflare's objects list: 1,000 per page by default, at most 10,000. */
const OBJECTS_DEFAULT_LIMIT = 1000;
const OBJECTS_MAX_LIMIT = 10_000;
const OBJECT_ID = /^[0-9a-f]{64}$/;

/** A namespace as the SDK types it (`durable-objects/namespaces` Namespace). */
const renderNamespace = (r: NamespaceRecord) => ({
  id: r.id,
  class: r.class_name,
  name: `${r.script_name}_${r.class_name}`,
  script: r.script_name,
  use_sqlite: r.use_sqlite,
});

/**
 * `GET /accounts/{id}/workers/durable_objects/namespaces` (page/per_page) and `.../namespaces/{id}/objects`
 * (cursor/limit): the account's classes and the objects that have stored data (on every node). Without the
 * service, the list is empty and no namespace exists.
 */
export function mountDurableObjectRoutes(app: Hono<AppEnv>, service: DurableObjectsService | undefined): void {
  const base = '/accounts/:account_id/workers/durable_objects/namespaces';
  const account = (c: ApiContext) => c.req.param('account_id')!;
  app.get(base, async (c) => {
    const query = c.req.query();
    const page = parsePagination(query, { defaultPerPage: 20, maxPerPage: 1000, minPerPage: 1, code: 10001 });
    const all = service ? await service.store.forAccount(account(c)) : [];
    const { items, info } = pageOf(all.map(renderNamespace), page);
    return ok(c, items, { resultInfo: info });
  });
  app.get(`${base}/:namespace_id/objects`, async (c) => {
    const namespace = service && (await service.store.get(account(c), c.req.param('namespace_id')!));
    if (!service || !namespace) throw DurableObjectErrors.namespaceNotFound();
    const rawLimit = c.req.query('limit');
    if (rawLimit !== undefined && (!/^\d+$/.test(rawLimit) || +rawLimit < 10 || +rawLimit > OBJECTS_MAX_LIMIT))
      throw new LedgeError(400, 10001, `limit must be an integer from 10 to ${OBJECTS_MAX_LIMIT}`);
    const cursor = c.req.query('cursor') || undefined;
    if (cursor !== undefined && !OBJECT_ID.test(cursor))
      throw new LedgeError(400, 10001, 'cursor must be the cursor of a previous page');
    const limit = rawLimit === undefined ? OBJECTS_DEFAULT_LIMIT : Number(rawLimit);
    const listed = await service.listObjects(namespace, { limit, cursor });
    return ok(
      c,
      listed.ids.map((id) => ({ id, hasStoredData: true })),
      { resultInfo: { count: listed.ids.length, cursor: listed.cursor ?? '' } },
    );
  });
}
