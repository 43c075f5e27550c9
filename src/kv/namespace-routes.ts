import { Hono } from 'hono';
import { readJson } from '../api-kit/body.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { pageInfo, parsePagination } from '../api-kit/pagination.ts';
import { ok } from '../api-kit/respond.ts';
import { KvCodes, KvErrors } from './errors.ts';
import { renderNamespace } from './render.ts';
import { NamespaceListQuerySchema, TitleSchema } from './schemas.ts';
import type { KvService } from './service.ts';

const BASE = '/accounts/:account_id/storage/kv/namespaces';

/** `/accounts/{a}/storage/kv/namespaces`: create, list (page/per_page), get, rename, delete. */
export function namespaceRoutes(kv: KvService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.post(BASE, async (c) => {
    const body = await readJson(c, TitleSchema, { code: KvCodes.missingTitle });
    return ok(c, renderNamespace(await kv.create(c.req.param('account_id'), body.title)));
  });

  app.get(BASE, async (c) => {
    const query = c.req.query();
    const page = parsePagination(query, {
      defaultPerPage: 20,
      maxPerPage: 1000,
      minPerPage: 5,
      code: KvCodes.invalidInput,
    });
    const sort = NamespaceListQuerySchema.safeParse({ order: query['order'], direction: query['direction'] });
    if (!sort.success) throw KvErrors.invalid('order must be id or title, and direction asc or desc');
    const accountId = c.req.param('account_id');
    const [records, total] = await Promise.all([
      kv.list(accountId, {
        offset: page.offset,
        limit: page.limit,
        order: sort.data.order ?? 'id',
        direction: sort.data.direction ?? 'asc',
      }),
      kv.count(accountId),
    ]);
    return ok(c, records.map(renderNamespace), { resultInfo: pageInfo(page, records.length, total) });
  });

  app.get(`${BASE}/:namespace_id`, async (c) => {
    return ok(c, renderNamespace(await kv.require(c.req.param('account_id'), c.req.param('namespace_id'))));
  });

  app.put(`${BASE}/:namespace_id`, async (c) => {
    const body = await readJson(c, TitleSchema, { code: KvCodes.missingTitle });
    const record = await kv.rename(c.req.param('account_id'), c.req.param('namespace_id'), body.title);
    return ok(c, renderNamespace(record));
  });

  app.delete(`${BASE}/:namespace_id`, async (c) => {
    await kv.delete(c.req.param('account_id'), c.req.param('namespace_id'));
    return ok(c, {});
  });

  return app;
}
