import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveServerConfig } from '../../src/server/index.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { alerting, call, createPool, webhookPolicy } from './api-helpers.ts';
import { startWebhookReceiver, waitUntil, type WebhookReceiver } from './receivers.ts';

/** The notification settings the server's settings give from this environment. */
const notificationSettings = (env: NodeJS.ProcessEnv) => resolveServerConfig({}, env).notifications;

const DAY = 86_400_000;

describe('notification history retention', () => {
  let ledge: TestLedge;
  let hooks: WebhookReceiver;
  let pool: string;

  const history = async () =>
    (await call(ledge, 'GET', `${alerting(ledge)}/history?per_page=100`)).body.result as {
      description: string;
      alert_body: string;
    }[];
  const count = async (table: string) =>
    (await ledge.server.platform.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))!.n;
  /** Real deliveries: switching a pool off or on raises an enablement alert to the policy's webhook. */
  const toggle = async (enabled: boolean, expected: number) => {
    expect(
      (await call(ledge, 'PATCH', `/accounts/${ledge.accountId}/load_balancers/pools/${pool}`, { enabled })).status,
    ).toBe(200);
    await waitUntil(
      async () => ((await count('notification_history')) >= expected ? true : undefined),
      10_000,
      'the attempt',
    );
  };
  /** Backdates attempts (as if they were sent `days` ago): the test cannot wait a day. */
  const age = (days: number, where: string) =>
    ledge.server.platform.db.run(`UPDATE notification_history SET sent = ? WHERE ${where}`, [
      new Date(Date.now() - days * DAY).toISOString(),
    ]);

  beforeAll(async () => {
    hooks = await startWebhookReceiver();
    // The first retry of a failed delivery waits 2.4-3.6 s: long enough that none lands while the last test
    // backdates and prunes, short enough for it to see the retry delivered afterwards.
    ledge = await startLedge({ env: { LEDGE_NOTIFY_HISTORY_DAYS: '2', LEDGE_NOTIFY_RETRY_BASE_MS: '3000' } });
    pool = await createPool(ledge, { name: 'kept' });
    await webhookPolicy(ledge, hooks.url, { name: 'switches', alertType: 'load_balancing_pool_enablement_alert' });
  });
  afterAll(async () => {
    await ledge?.close();
    await hooks?.close();
  });

  it('reads the retention from LEDGE_NOTIFY_HISTORY_DAYS (default 30 days, as on Cloudflare)', () => {
    expect(notificationSettings({}).historyRetentionMs).toBe(30 * DAY);
    expect(notificationSettings({ LEDGE_NOTIFY_HISTORY_DAYS: '90' }).historyRetentionMs).toBe(90 * DAY);
    expect(() => notificationSettings({ LEDGE_NOTIFY_HISTORY_DAYS: '0' })).toThrow(/LEDGE_NOTIFY_HISTORY_DAYS/);
    expect(ledge.server.platform.notifications.history.retentionMs).toBe(2 * DAY);
  });

  it('shows no attempt older than the retention, and prunes them with the bodies nothing else uses', async () => {
    await toggle(false, 1);
    await toggle(true, 2);
    await toggle(false, 3);
    expect((await history()).map((h) => h.description)).toEqual([
      'Load balancing pool kept was disabled',
      'Load balancing pool kept was enabled',
      'Load balancing pool kept was disabled',
    ]);
    expect(await count('notification_messages')).toBe(3);

    // The two oldest attempts fall out of the 2-day window: hidden at once, before any prune.
    await age(3, 'seq IN (SELECT seq FROM notification_history ORDER BY seq LIMIT 2)');
    expect((await history()).map((h) => h.description)).toEqual(['Load balancing pool kept was disabled']);
    // ?since earlier than the window does not bring them back.
    const since = encodeURIComponent(new Date(Date.now() - 10 * DAY).toISOString());
    const wide = await call(ledge, 'GET', `${alerting(ledge)}/history?since=${since}`);
    expect(wide.body.result).toHaveLength(1);
    expect(wide.body.result_info?.['total_count']).toBe(1);

    const pruned = await ledge.server.platform.notifications.retention.prune();
    expect(pruned).toEqual({ attempts: 2, bodies: 2 });
    expect(await count('notification_history')).toBe(1);
    expect(await count('notification_messages')).toBe(1);
    // What is kept still renders its body.
    expect(JSON.parse((await history())[0]!.alert_body)).toMatchObject({ data: { pool_name: 'kept', enabled: false } });
    // Nothing left to prune: a second run is a no-op.
    expect(await ledge.server.platform.notifications.retention.prune()).toEqual({ attempts: 0, bodies: 0 });
  });

  it('keeps a body that a pending delivery or a newer attempt still uses', async () => {
    hooks.status = 503; // the receiver fails: the delivery stays in the outbox, to be retried
    await toggle(true, 2);
    await waitUntil(
      async () => ((await count('notification_outbox')) === 1 ? true : undefined),
      10_000,
      'the pending retry',
    );
    await age(3, '1 = 1');
    const pruned = await ledge.server.platform.notifications.retention.prune();
    expect(pruned.attempts).toBe(2);
    // The failed attempt's body is the pending retry's: it stays for the retry to send.
    expect(pruned.bodies).toBe(1);
    expect(await count('notification_history')).toBe(0);
    expect(await count('notification_messages')).toBe(1);
    hooks.status = 200;
    const [retried] = await hooks.waitFor(
      1,
      (h) => (h.body['data'] as { enabled?: boolean })?.enabled === true && h.answered === 200,
      15_000,
    );
    expect(retried?.body['text']).toBe('Load balancing pool kept was enabled');
  });
});
