import { Hono } from 'hono';
import { z } from 'zod';
import { readJson } from '../api-kit/body.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { pageInfo, parsePagination } from '../api-kit/pagination.ts';
import { ok } from '../api-kit/respond.ts';
import { ZONE_VALIDATION_CODE } from './errors.ts';
import type { ZoneService } from './service.ts';

/** Cloudflare's zone list: 20 per page by default, 5 to 50. */
const ZONE_PAGING = { defaultPerPage: 20, maxPerPage: 50, minPerPage: 5, code: ZONE_VALIDATION_CODE } as const;

/** `/zones` and `/zones/{zone_id}`. HTTP only; the rules live in ZoneService. */
export function zoneRoutes(zones: ZoneService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.post('/zones', async (c) => {
    const body = await readJson(c, z.unknown(), { code: ZONE_VALIDATION_CODE, emptyAs: {} });
    return ok(c, await zones.render(await zones.create(c.get('principal'), body)));
  });

  app.get('/zones', async (c) => {
    const page = parsePagination(c.req.query(), ZONE_PAGING);
    const { zones: found, total } = await zones.list(
      c.get('principal'),
      {
        name: c.req.query('name'),
        accountId: c.req.query('account.id') ?? c.req.query('account[id]'),
        accountName: c.req.query('account.name') ?? c.req.query('account[name]'),
        status: c.req.query('status'),
        order: c.req.query('order'),
        direction: c.req.query('direction'),
      },
      page,
    );
    const rendered = await Promise.all(found.map((zone) => zones.render(zone)));
    return ok(c, rendered, { resultInfo: pageInfo(page, rendered.length, total) });
  });

  app.get('/zones/:zone_id', async (c) =>
    ok(c, await zones.render(await zones.get(c.get('principal'), c.req.param('zone_id')))),
  );

  app.delete('/zones/:zone_id', async (c) => ok(c, await zones.delete(c.get('principal'), c.req.param('zone_id'))));

  return app;
}
