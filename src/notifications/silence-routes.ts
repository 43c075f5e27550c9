import type { Hono } from 'hono';
import { readJson } from '../api-kit/body.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import { NOTIFICATION_VALIDATION_CODE } from './errors.ts';
import { renderSilence, SilenceCreateSchema, SilenceUpdateSchema, type AlertSilences } from './silences.ts';

const CODE = { code: NOTIFICATION_VALIDATION_CODE } as const;

/** `/accounts/{account_id}/alerting/v3/silences`: the SDK's five operations (create and update take arrays). */
export function mountSilenceRoutes(app: Hono<AppEnv>, silences: AlertSilences): void {
  const base = '/accounts/:account_id/alerting/v3/silences';
  app.get(base, async (c) => ok(c, (await silences.list(c.req.param('account_id'))).map(renderSilence)));
  app.post(base, async (c) => {
    const created = await silences.create(c.req.param('account_id'), await readJson(c, SilenceCreateSchema, CODE));
    return ok(c, created.map(renderSilence));
  });
  app.put(base, async (c) => {
    const updated = await silences.update(c.req.param('account_id'), await readJson(c, SilenceUpdateSchema, CODE));
    return ok(c, updated.map(renderSilence));
  });
  app.get(`${base}/:silence_id`, async (c) =>
    ok(c, renderSilence(await silences.get(c.req.param('account_id'), c.req.param('silence_id')))),
  );
  app.delete(`${base}/:silence_id`, async (c) => {
    await silences.delete(c.req.param('account_id'), c.req.param('silence_id'));
    return ok(c, null);
  });
}
