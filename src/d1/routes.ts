import { Hono } from 'hono';
import { readJson } from '../api-kit/body.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { pageInfo, parsePagination } from '../api-kit/pagination.ts';
import { ok } from '../api-kit/respond.ts';
import { D1_VALIDATION_CODE } from './errors.ts';
import { renderDatabase, renderListed, renderQueryResult, renderRawResult } from './render.ts';
import { DatabaseCreateSchema, DatabaseEditSchema, DatabaseUpdateSchema, QueryBodySchema } from './schemas.ts';
import type { D1Service } from './service.ts';

const BASE = '/accounts/:account_id/d1/database';
/** Cloudflare's list: 1,000 per page at most. */
const PAGING = { defaultPerPage: 1000, maxPerPage: 10_000, minPerPage: 10, code: D1_VALIDATION_CODE } as const;

/** `/accounts/{a}/d1/database`: create, list, get (by id or name), delete, query, raw. HTTP only. */
export function d1Routes(d1: D1Service): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.post(BASE, async (c) => {
    const body = await readJson(c, DatabaseCreateSchema, { code: D1_VALIDATION_CODE });
    const database = await d1.create(c.req.param('account_id'), body);
    return ok(c, renderDatabase(database, { num_tables: 0, file_size: 0 }));
  });

  app.get(BASE, async (c) => {
    const page = parsePagination(c.req.query(), PAGING);
    const { databases, total } = await d1.list(c.req.param('account_id'), {
      name: c.req.query('name') || undefined,
      offset: page.offset,
      limit: page.limit,
    });
    return ok(c, databases.map(renderListed), { resultInfo: pageInfo(page, databases.length, total) });
  });

  app.get(`${BASE}/:database_id`, async (c) => {
    const database = await d1.require(c.req.param('account_id'), c.req.param('database_id'));
    // wrangler resolves names with `fields=uuid,name`: those need no call to the engine.
    const fields = c.req.query('fields')?.split(',');
    const needsStats = !fields || fields.some((f) => f === 'num_tables' || f === 'file_size');
    return ok(c, renderDatabase(database, needsStats ? await d1.stats(database) : undefined));
  });

  // Read replication: one copy, so "disabled" is the only mode; the answer is the database as it is.
  app.put(`${BASE}/:database_id`, async (c) => {
    const database = await d1.require(c.req.param('account_id'), c.req.param('database_id'));
    await readJson(c, DatabaseUpdateSchema, { code: D1_VALIDATION_CODE });
    return ok(c, renderDatabase(database, await d1.stats(database)));
  });

  app.patch(`${BASE}/:database_id`, async (c) => {
    const database = await d1.require(c.req.param('account_id'), c.req.param('database_id'));
    await readJson(c, DatabaseEditSchema, { code: D1_VALIDATION_CODE, emptyAs: {} });
    return ok(c, renderDatabase(database, await d1.stats(database)));
  });

  app.delete(`${BASE}/:database_id`, async (c) => {
    await d1.delete(c.req.param('account_id'), c.req.param('database_id'));
    return ok(c, null);
  });

  app.post(`${BASE}/:database_id/query`, async (c) => {
    const database = await d1.require(c.req.param('account_id'), c.req.param('database_id'));
    const body = await readJson(c, QueryBodySchema, { code: D1_VALIDATION_CODE });
    return ok(c, (await d1.query(database, body)).map(renderQueryResult));
  });

  app.post(`${BASE}/:database_id/raw`, async (c) => {
    const database = await d1.require(c.req.param('account_id'), c.req.param('database_id'));
    const body = await readJson(c, QueryBodySchema, { code: D1_VALIDATION_CODE });
    return ok(c, (await d1.query(database, body)).map(renderRawResult));
  });

  return app;
}
