import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { alerting, call, createPool, webhookPolicy } from './api-helpers.ts';
import { startWebhookReceiver, waitUntil, type WebhookReceiver } from './receivers.ts';

interface Hour {
  hour: string;
  delivered: number;
  failed: number;
  other: number;
}

/** `GET .../alerting/v3/history/hourly` (Ledge extension): the deliveries chart's counts, from real deliveries. */
describe('alert attempts per hour by outcome', () => {
  let ledge: TestLedge;
  let hooks: WebhookReceiver;
  let pool: string;
  const count = async () =>
    (await ledge.server.platform.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM notification_history'))!.n;
  const toggle = async (enabled: boolean, expected: number) => {
    expect(
      (await call(ledge, 'PATCH', `/accounts/${ledge.accountId}/load_balancers/pools/${pool}`, { enabled })).status,
    ).toBe(200);
    await waitUntil(async () => (Number(await count()) >= expected ? true : undefined), 10_000, 'the attempt');
  };

  beforeAll(async () => {
    hooks = await startWebhookReceiver();
    // A failed delivery is retried after a minute: the test sees the failure, not its retry.
    ledge = await startLedge({ env: { LEDGE_NOTIFY_RETRY_BASE_MS: '60000' } });
    pool = await createPool(ledge, { name: 'counted' });
    await webhookPolicy(ledge, hooks.url, { name: 'switches', alertType: 'load_balancing_pool_enablement_alert' });
  });
  afterAll(async () => {
    await ledge?.close();
    await hooks?.close();
  });

  it('counts delivered and failed attempts in their hours, over the whole period', async () => {
    await toggle(false, 1);
    await toggle(true, 2);
    hooks.status = 500;
    await toggle(false, 3);
    // One delivered attempt moved three days back, as if sent then.
    const threeDays = new Date(Date.now() - 3 * 86_400_000);
    await ledge.server.platform.db.run(
      `UPDATE notification_history SET sent = ? WHERE seq = (SELECT MIN(seq) FROM notification_history)`,
      [threeDays.toISOString()],
    );
    const since = new Date(Date.now() - 7 * 86_400_000).toISOString();
    const res = await call(ledge, 'GET', `${alerting(ledge)}/history/hourly?since=${since}`);
    expect(res.status).toBe(200);
    const hours = res.body.result as Hour[];
    const hourOf = (date: Date) => `${date.toISOString().slice(0, 13)}:00:00.000Z`;
    expect(hours).toEqual([
      { hour: hourOf(threeDays), delivered: 1, failed: 0, other: 0 },
      // The current hour (the test may straddle an hour: then the counts split, the totals stay).
      ...hours.slice(1),
    ]);
    const now = hours.slice(1);
    expect(now.reduce((sum, h) => sum + h.delivered, 0)).toBe(1);
    expect(now.reduce((sum, h) => sum + h.failed, 0)).toBe(1);
    // A `since` after the old attempt leaves it out.
    const recent = await call(
      ledge,
      'GET',
      `${alerting(ledge)}/history/hourly?since=${new Date(Date.now() - 86_400_000).toISOString()}`,
    );
    expect((recent.body.result as Hour[]).reduce((sum, h) => sum + h.delivered + h.failed, 0)).toBe(2);
  });

  it('refuses a since that is not a date', async () => {
    const res = await call(ledge, 'GET', `${alerting(ledge)}/history/hourly?since=yesterday`);
    expect(res.status).toBe(400);
  });
});
