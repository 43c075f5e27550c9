import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { alerting, call, createPool } from './api-helpers.ts';
import { publishEvent } from './events.ts';
import {
  startSmtpReceiver,
  startWebhookReceiver,
  type ReceivedWebhook,
  type SmtpReceiver,
  type WebhookReceiver,
} from './receivers.ts';
import { poll } from '../helpers/wait.ts';

describe('health events -> policies -> webhook and email deliveries', () => {
  let ledge: TestLedge;
  let receiver: WebhookReceiver;
  let smtp: SmtpReceiver;
  let poolA: string;
  let poolB: string;
  let webhookId: string;
  const policyIds: Record<string, string> = {};

  const createPolicy = async (name: string, extra: Record<string, unknown>) => {
    const { status, body } = await call(ledge, 'POST', `${alerting(ledge)}/policies`, {
      name,
      enabled: true,
      alert_type: 'load_balancing_health_alert',
      mechanisms: { webhooks: [{ id: webhookId }] },
      ...extra,
    });
    if (status !== 200) throw new Error(JSON.stringify(body.errors));
    policyIds[name] = (body.result as { id: string }).id;
  };
  const hooksFor = (name: string) => (hook: ReceivedWebhook) => hook.body['policy_id'] === policyIds[name];
  /** Every delivery due is sent and recorded: one that has not reached a receiver by then never will. */
  const settled = () => ledge.server.platform.notifications.dispatcher.settled();

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    process.env['LEDGE_NOTIFY_WEBHOOK_TIMEOUT_MS'] = '1000';
    ledge = await startLedge({ flags: { smtpUrl: smtp.url } });
    delete process.env['LEDGE_NOTIFY_WEBHOOK_TIMEOUT_MS'];
    receiver = await startWebhookReceiver();
    poolA = await createPool(ledge, { name: 'pool-a' });
    poolB = await createPool(ledge, { name: 'pool-b' });
    const created = await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, {
      name: 'ops',
      url: receiver.url,
      secret: 'hook-secret',
    });
    webhookId = (created.body.result as { id: string }).id;
    await createPolicy('everything', {});
    await createPolicy('unhealthy only', { filters: { new_health: ['Unhealthy'] } });
    await createPolicy('pools only', { filters: { event_source: ['pool'] } });
    await createPolicy('other pool', { filters: { pool_id: [poolB] } });
    await createPolicy('disabled', { enabled: false });
    await createPolicy('mail', {
      mechanisms: { email: [{ id: 'oncall@example.com' }] },
      filters: { pool_id: [poolA], event_source: ['origin'] },
    });
    receiver.received.length = 0;
  });
  afterAll(async () => {
    await ledge.close();
    await receiver.close();
    await smtp.close();
  });

  it('delivers an origin Unhealthy event to exactly the matching policies, with the documented payload', async () => {
    const event = await publishEvent(ledge.server.platform, {
      poolId: poolA,
      poolName: 'pool-a',
      originName: 'origin-1',
      newHealth: 'Unhealthy',
    });
    const [everything] = await receiver.waitFor(1, hooksFor('everything'));
    await receiver.waitFor(1, hooksFor('unhealthy only'));
    const [mail] = await smtp.waitFor(1, (m) => m.to.includes('oncall@example.com'));
    // Non-matching policies would have (wrongly) delivered by now.
    await settled();
    expect(receiver.received.filter(hooksFor('pools only'))).toHaveLength(0);
    expect(receiver.received.filter(hooksFor('other pool'))).toHaveLength(0);
    expect(receiver.received.filter(hooksFor('disabled'))).toHaveLength(0);
    expect(receiver.received).toHaveLength(2);

    expect(everything?.headers['cf-webhook-auth']).toBe('hook-secret');
    expect(everything?.body).toMatchObject({
      name: 'everything',
      account_id: ledge.accountId,
      policy_id: policyIds['everything'],
      policy_name: 'everything',
      alert_type: 'load_balancing_health_alert',
      alert_event: 'ALERT_STATE_EVENT_START',
      ts: Math.floor(Date.parse(event.occurredAt) / 1000),
      data: {
        pool_id: poolA,
        pool_name: 'pool-a',
        origin_name: 'origin-1',
        new_health: 'Unhealthy',
        event_source: 'origin',
        reason: 'TCP connection failed',
      },
    });
    expect(String(everything?.body['text'])).toContain('origin origin-1 (127.0.0.1) of pool pool-a is now Unhealthy');
    expect(everything?.body['alert_correlation_id']).toMatch(/^[0-9a-f]{32}$/);
    expect(mail?.subject).toContain('is now Unhealthy');
    expect(mail?.text).toContain(`Pool:         pool-a (${poolA})`);
    expect(mail?.text).toContain('Sent by notification policy "mail"');
  });

  it('closes the incident with a Healthy alert carrying the same correlation id', async () => {
    const start = receiver.received.find(hooksFor('everything'));
    await publishEvent(ledge.server.platform, { poolId: poolA, newHealth: 'Healthy', reason: 'No failures' });
    const [, end] = await receiver.waitFor(2, hooksFor('everything'));
    expect(end?.body['alert_event']).toBe('ALERT_STATE_EVENT_END');
    expect(end?.body['alert_correlation_id']).toBe(start?.body['alert_correlation_id']);
    await settled();
    expect(receiver.received.filter(hooksFor('unhealthy only'))).toHaveLength(1);
  });

  it('matches pool events for pool-only policies and the pool_id filter', async () => {
    await publishEvent(ledge.server.platform, {
      poolId: poolB,
      poolName: 'pool-b',
      eventSource: 'pool',
      originName: null,
      originAddress: null,
    });
    const [pool] = await receiver.waitFor(1, hooksFor('pools only'));
    expect(pool?.body['data']).toMatchObject({ pool_id: poolB, event_source: 'pool', origin_name: '' });
    await receiver.waitFor(1, hooksFor('other pool'));
  });

  it('writes nothing when the producing transaction rolls back', async () => {
    const db = ledge.server.platform.db;
    const eventId = 987_654_321;
    await expect(publishEvent(ledge.server.platform, { id: eventId, poolId: poolA }, true)).rejects.toThrow(
      /producer failed/,
    );
    await settled();
    expect(
      (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM notification_outbox WHERE event_id = ?', [eventId]))?.n,
    ).toBe(0);
    const bodies = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM notification_messages WHERE body LIKE ?', [
      `%"event_id":${eventId}%`,
    ]);
    expect(bodies?.n).toBe(0);
    expect(
      receiver.received.filter((hook) => (hook.body['data'] as { event_id?: number }).event_id === eventId),
    ).toEqual([]);
  });

  it('honours alert_interval: the same alert is not repeated within the interval', async () => {
    await createPolicy('throttled', { alert_interval: '1h', filters: { pool_id: [poolB], event_source: ['origin'] } });
    await publishEvent(ledge.server.platform, { poolId: poolB, originName: 'o-9' });
    await receiver.waitFor(1, hooksFor('throttled'));
    await publishEvent(ledge.server.platform, { poolId: poolB, originName: 'o-9' });
    await publishEvent(ledge.server.platform, {
      poolId: poolB,
      originName: 'o-9',
      newHealth: 'Healthy',
      reason: 'No failures',
    });
    await receiver.waitFor(2, hooksFor('throttled'));
    await settled();
    const got = receiver.received
      .filter(hooksFor('throttled'))
      .map((h) => (h.body['data'] as { new_health: string }).new_health);
    expect(got).toEqual(['Unhealthy', 'Healthy']);
  });

  it('retries a failing receiver with back-off and records every attempt in history', async () => {
    await createPolicy('flaky', { filters: { pool_id: [poolA], event_source: ['pool'] } });
    receiver.status = 503;
    const sentAt = new Date().toISOString();
    await publishEvent(ledge.server.platform, {
      poolId: poolA,
      eventSource: 'pool',
      originName: null,
      originAddress: null,
    });
    await receiver.waitFor(1, hooksFor('flaky'));
    receiver.status = 200;
    await receiver.waitFor(2, hooksFor('flaky'), 15_000);
    const items = await waitForHistory(
      ledge,
      sentAt,
      (rows) => rows.filter((r) => r.name === 'flaky' && r.status === 'delivered').length === 1,
    );
    const flaky = items.filter((r) => r.name === 'flaky');
    expect(flaky.map((r) => r.status)).toEqual(['delivered', 'retrying']);
    expect(flaky[1]).toMatchObject({
      error: 'HTTP 503',
      attempt: 1,
      mechanism_type: 'webhook',
      mechanism: receiver.url,
    });
    expect(flaky[0]).toMatchObject({ error: null, attempt: 2 });
    // The history shows what was sent.
    const sentBody = JSON.parse((flaky[0] as unknown as { alert_body: string }).alert_body) as Record<string, unknown>;
    expect(sentBody).toMatchObject({ policy_name: 'flaky', alert_type: 'load_balancing_health_alert' });
    const webhook = (await call(ledge, 'GET', `${alerting(ledge)}/destinations/webhooks/${webhookId}`)).body
      .result as Record<string, string>;
    expect(webhook['last_failure']).toEqual(expect.any(String));
    expect(Date.parse(webhook['last_success']!)).toBeGreaterThanOrEqual(Date.parse(webhook['last_failure']!));
  });

  it('times out a receiver that never answers, then retries it', async () => {
    await createPolicy('hung', { filters: { pool_id: [poolB], event_source: ['pool'], new_health: ['Healthy'] } });
    receiver.status = 0;
    const sentAt = new Date().toISOString();
    await publishEvent(ledge.server.platform, {
      poolId: poolB,
      eventSource: 'pool',
      newHealth: 'Healthy',
      reason: 'No failures',
      originName: null,
    });
    await receiver.waitFor(1, hooksFor('hung'));
    const failed = await waitForHistory(ledge, sentAt, (rows) => rows.some((r) => r.name === 'hung'));
    expect(failed.find((r) => r.name === 'hung')).toMatchObject({ status: 'retrying', error: 'timeout after 1000 ms' });
    receiver.status = 200;
    await waitForHistory(ledge, sentAt, (rows) => rows.some((r) => r.name === 'hung' && r.status === 'delivered'));
  });

  it('pages history and filters it by since/before', async () => {
    const all = await call(ledge, 'GET', `${alerting(ledge)}/history?per_page=5&page=1`);
    const total = all.body.result_info?.['total_count'] ?? 0;
    expect(total).toBeGreaterThan(5);
    expect(all.body.result as unknown[]).toHaveLength(5);
    const everything = await call(ledge, 'GET', `${alerting(ledge)}/history?per_page=1000`);
    const mail = (everything.body.result as { mechanism_type: string; mechanism: string; alert_body: string }[]).find(
      (row) => row.mechanism_type === 'email',
    );
    expect(mail?.mechanism).toBe('oncall@example.com');
    expect(mail?.alert_body).toContain(`Pool:         pool-a (${poolA})`);
    const past = await call(ledge, 'GET', `${alerting(ledge)}/history?per_page=5&page=1000`);
    expect(past.body.result).toEqual([]);
    const future = await call(
      ledge,
      'GET',
      `${alerting(ledge)}/history?since=${encodeURIComponent('2999-01-01T00:00:00Z')}`,
    );
    expect(future.body.result).toEqual([]);
    const before = await call(
      ledge,
      'GET',
      `${alerting(ledge)}/history?before=${encodeURIComponent('2000-01-01T00:00:00Z')}`,
    );
    expect(before.body.result_info?.['total_count']).toBe(0);
    const bad = await call(ledge, 'GET', `${alerting(ledge)}/history?since=yesterday`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]?.message).toMatch(/since/);
    const badPage = await call(ledge, 'GET', `${alerting(ledge)}/history?per_page=2`);
    expect(badPage.status).toBe(400);
  });
});

interface HistoryRow {
  name: string;
  status: string;
  error: string | null;
  attempt: number;
  mechanism: string;
  mechanism_type: string;
  sent: string;
}

async function waitForHistory(
  ledge: TestLedge,
  since: string,
  done: (rows: HistoryRow[]) => boolean,
): Promise<HistoryRow[]> {
  let rows: HistoryRow[] = [];
  const reached = await poll(async () => {
    const { body } = await call(
      ledge,
      'GET',
      `${alerting(ledge)}/history?per_page=100&since=${encodeURIComponent(since)}`,
    );
    rows = body.result as HistoryRow[];
    return done(rows);
  });
  if (!reached) throw new Error(`history never reached the expected state: ${JSON.stringify(rows)}`);
  return rows;
}
