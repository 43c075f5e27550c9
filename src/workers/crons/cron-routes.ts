import type { Hono } from 'hono';
import { z } from 'zod';
import { readJson } from '../../api-kit/body.ts';
import type { ApiContext, AppEnv } from '../../api-kit/context.ts';
import { ok } from '../../api-kit/respond.ts';
import type { CronService } from './cron-service.ts';

const CODE = 10021;

/**
 * Cron Triggers: `GET/PUT .../scripts/{s}/schedules` as wrangler deploy uses them, and two Ledge
 * additions for the CLI: the recorded runs (`GET .../schedules/runs`) and a run now
 * (`POST .../schedules/trigger`, body `{"cron": "..."}` optional).
 */
export function mountCronRoutes(app: Hono<AppEnv>, crons: CronService): void {
  const base = '/accounts/:account_id/workers/scripts/:script/schedules';
  const account = (c: ApiContext) => c.req.param('account_id')!;
  const script = (c: ApiContext) => c.req.param('script')!;
  app.get(base, async (c) => ok(c, await crons.getSchedules(account(c), script(c))));
  app.put(base, async (c) => {
    const body = await readJson(c, z.unknown(), { code: CODE });
    return ok(c, await crons.putSchedules(account(c), script(c), body));
  });
  app.get(`${base}/runs`, async (c) => {
    const limit = Number(c.req.query('limit') ?? 20);
    return ok(c, await crons.runs(account(c), script(c), Number.isInteger(limit) ? limit : 20));
  });
  app.post(`${base}/trigger`, async (c) => {
    const body = await readJson(c, z.object({ cron: z.string().max(200).optional() }), { code: CODE, emptyAs: {} });
    return ok(c, await crons.trigger(account(c), script(c), body.cron));
  });
}
