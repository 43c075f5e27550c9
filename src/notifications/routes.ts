import { Hono } from 'hono';
import { parseWith, readJson } from '../api-kit/body.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { pageInfo, parsePagination } from '../api-kit/pagination.ts';
import { ok } from '../api-kit/respond.ts';
import { renderAvailableAlerts } from './alert-types.ts';
import { NOTIFICATION_VALIDATION_CODE } from './errors.ts';
import { legacyMigrationStatus } from './migration-status.ts';
import { renderPolicy } from './policies.ts';
import { HistoryQuerySchema, PolicyInputSchema, PolicyUpdateSchema, WebhookInputSchema } from './schemas.ts';
import type { NotificationService } from './service.ts';
import { renderWebhook } from './webhooks.ts';
import { mountSilenceRoutes } from './silence-routes.ts';

const CODE = { code: NOTIFICATION_VALIDATION_CODE } as const;
const HISTORY_PAGING = {
  defaultPerPage: 25,
  minPerPage: 5,
  maxPerPage: 1000,
  code: NOTIFICATION_VALIDATION_CODE,
} as const;

/** `/accounts/{account_id}/alerting/v3/...`: account-level only (there is no zone-level variant). */
export function notificationRoutes(notifications: NotificationService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const base = '/accounts/:account_id/alerting/v3';

  app.get(`${base}/available_alerts`, (c) => ok(c, renderAvailableAlerts()));

  app.get(`${base}/destinations/eligible`, (c) =>
    ok(c, {
      email: [{ eligible: true, ready: true, type: 'email' }],
      webhook: [{ eligible: true, ready: true, type: 'webhook' }],
      pagerduty: [{ eligible: false, ready: false, type: 'pagerduty' }],
    }),
  );

  app.get(`${base}/policies`, async (c) => {
    const policies = await notifications.policies.list(c.req.param('account_id'));
    return ok(c, policies.map(renderPolicy));
  });
  app.post(`${base}/policies`, async (c) => {
    const input = await readJson(c, PolicyInputSchema, CODE);
    const policy = await notifications.policies.create(c.req.param('account_id'), input);
    return ok(c, { id: policy.id });
  });
  app.get(`${base}/policies/:policy_id`, async (c) => {
    const policy = await notifications.policies.get(c.req.param('account_id'), c.req.param('policy_id'));
    return ok(c, renderPolicy(policy));
  });
  app.put(`${base}/policies/:policy_id`, async (c) => {
    const changes = await readJson(c, PolicyUpdateSchema, CODE);
    const policy = await notifications.policies.update(c.req.param('account_id'), c.req.param('policy_id'), changes);
    return ok(c, { id: policy.id });
  });
  app.delete(`${base}/policies/:policy_id`, async (c) => {
    await notifications.policies.delete(c.req.param('account_id'), c.req.param('policy_id'));
    return ok(c, null);
  });

  mountSilenceRoutes(app, notifications.silences);

  app.get(`${base}/destinations/webhooks`, async (c) => {
    const webhooks = await notifications.webhooks.list(c.req.param('account_id'));
    return ok(c, webhooks.map(renderWebhook));
  });
  app.post(`${base}/destinations/webhooks`, async (c) => {
    const input = await readJson(c, WebhookInputSchema, CODE);
    const webhook = await notifications.webhooks.create(c.req.param('account_id'), input);
    return ok(c, { id: webhook.id });
  });
  app.get(`${base}/destinations/webhooks/:webhook_id`, async (c) => {
    const webhook = await notifications.webhooks.get(c.req.param('account_id'), c.req.param('webhook_id'));
    return ok(c, renderWebhook(webhook));
  });
  app.put(`${base}/destinations/webhooks/:webhook_id`, async (c) => {
    const input = await readJson(c, WebhookInputSchema, CODE);
    const webhook = await notifications.webhooks.update(c.req.param('account_id'), c.req.param('webhook_id'), input);
    return ok(c, { id: webhook.id });
  });
  app.delete(`${base}/destinations/webhooks/:webhook_id`, async (c) => {
    await notifications.webhooks.delete(c.req.param('account_id'), c.req.param('webhook_id'));
    return ok(c, null);
  });

  app.get(`${base}/history`, async (c) => {
    const query = c.req.query();
    const paging = parsePagination(query, HISTORY_PAGING);
    const range = parseWith(
      HistoryQuerySchema,
      { since: query['since'], before: query['before'] },
      NOTIFICATION_VALIDATION_CODE,
    );
    const { items, total } = await notifications.history.list(c.req.param('account_id'), { ...range, ...paging });
    return ok(c, items, { resultInfo: pageInfo(paging, items.length, total) });
  });

  // Ledge extension (not in Cloudflare's API): attempts per hour by outcome, for the dashboard's deliveries chart.
  app.get(`${base}/history/hourly`, async (c) => {
    const { since } = parseWith(
      HistoryQuerySchema,
      { since: c.req.query('since'), before: undefined },
      NOTIFICATION_VALIDATION_CODE,
    );
    return ok(c, await notifications.history.hourly(c.req.param('account_id'), since));
  });

  // Ledge extension (not in Cloudflare's API): where the account stands in the notification_email migration.
  app.get(`${base}/legacy_migration`, async (c) => {
    const accountId = c.req.param('account_id');
    const poolIds = c.req.queries('pool_id') ?? [];
    const policies = await notifications.policies.list(accountId);
    return ok(c, await legacyMigrationStatus(accountId, { pools: notifications.pools, policies }, poolIds));
  });

  return app;
}
