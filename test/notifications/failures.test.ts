import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { alerting, call, createPool } from './api-helpers.ts';
import { publishEvent } from './events.ts';
import { startSmtpReceiver, startWebhookReceiver, type SmtpReceiver, type WebhookReceiver } from './receivers.ts';
import { poll } from '../helpers/wait.ts';

interface HistoryRow {
  name: string;
  status: string;
  error: string | null;
  mechanism_type: string;
}

describe('delivery failures: SMTP outage and giving up', () => {
  let ledge: TestLedge;
  let receiver: WebhookReceiver;
  let smtp: SmtpReceiver | undefined;
  let smtpPort: number;
  let poolId: string;

  beforeAll(async () => {
    // A port where no SMTP server listens yet (taken, then released).
    const probe = await startSmtpReceiver();
    smtpPort = Number(new URL(probe.url).port);
    await probe.close();
    process.env['LEDGE_NOTIFY_RETRY_BASE_MS'] = '100';
    process.env['LEDGE_NOTIFY_RETRY_MAX_MS'] = '300';
    process.env['LEDGE_NOTIFY_GIVE_UP_AFTER'] = '2';
    ledge = await startLedge({ flags: { smtpUrl: `smtp://127.0.0.1:${smtpPort}` } });
    for (const name of ['LEDGE_NOTIFY_RETRY_BASE_MS', 'LEDGE_NOTIFY_RETRY_MAX_MS', 'LEDGE_NOTIFY_GIVE_UP_AFTER'])
      delete process.env[name];
    receiver = await startWebhookReceiver();
    poolId = await createPool(ledge, { name: 'f-pool' });
  });
  afterAll(async () => {
    await ledge.close();
    await receiver.close();
    await smtp?.close();
  });

  const history = async (): Promise<HistoryRow[]> =>
    (await call(ledge, 'GET', `${alerting(ledge)}/history?per_page=1000`)).body.result as HistoryRow[];
  const until = async (done: (rows: HistoryRow[]) => boolean): Promise<HistoryRow[]> => {
    const rows = await poll(async () => {
      const rows = await history();
      return done(rows) && rows;
    });
    if (!rows) throw new Error(`history never matched: ${JSON.stringify(await history())}`);
    return rows;
  };

  it('retries mail while the SMTP server is down and delivers once it is back', async () => {
    await call(ledge, 'POST', `${alerting(ledge)}/policies`, {
      name: 'mail',
      enabled: true,
      alert_type: 'load_balancing_health_alert',
      mechanisms: { email: [{ id: 'ops@example.com' }] },
      filters: { event_source: ['pool'] },
    });
    await publishEvent(ledge.server.platform, { poolId, eventSource: 'pool', originName: null, originAddress: null });
    const failing = await until((rows) => rows.some((r) => r.name === 'mail' && r.status === 'retrying'));
    expect(failing.find((r) => r.name === 'mail')?.error).toMatch(/ECONNREFUSED|connect/i);
    smtp = await startSmtpReceiver(smtpPort);
    const [mail] = await smtp.waitFor(1, (m) => m.to.includes('ops@example.com'));
    expect(mail?.subject).toContain('pool pool-a is now Unhealthy');
    await until((rows) => rows.some((r) => r.name === 'mail' && r.status === 'delivered'));
  });

  it('gives a delivery up after the configured time, recording it as failed', async () => {
    const hook = await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, {
      name: 'down',
      url: receiver.url,
    });
    await call(ledge, 'POST', `${alerting(ledge)}/policies`, {
      name: 'doomed',
      enabled: true,
      alert_type: 'load_balancing_health_alert',
      mechanisms: { webhooks: [{ id: (hook.body.result as { id: string }).id }] },
      filters: { event_source: ['origin'] },
    });
    receiver.status = 500;
    await publishEvent(ledge.server.platform, { poolId, originName: 'doomed-origin' });
    const rows = await until((all) => all.some((r) => r.name === 'doomed' && r.status === 'failed'));
    const doomed = rows.filter((r) => r.name === 'doomed');
    expect(doomed.filter((r) => r.status === 'retrying').length).toBeGreaterThanOrEqual(2);
    expect(doomed[0]).toMatchObject({ status: 'failed', error: 'HTTP 500' });
    expect(
      (
        await ledge.server.platform.db.get<{ n: number }>(
          "SELECT COUNT(*) AS n FROM notification_outbox WHERE policy_name = 'doomed'",
        )
      )?.n,
    ).toBe(0);
    const webhook = (
      await call(ledge, 'GET', `${alerting(ledge)}/destinations/webhooks/${(hook.body.result as { id: string }).id}`)
    ).body.result as { last_failure?: string };
    expect(Date.parse(webhook.last_failure!)).not.toBeNaN();
  });
});
