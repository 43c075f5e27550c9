import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { ManualClock } from '../helpers/manual-clock.ts';
import { probeRounds, TestOrigin } from '../load-balancing/helpers.ts';
import { alerting, call } from './api-helpers.ts';
import {
  startSmtpReceiver,
  startWebhookReceiver,
  type ReceivedWebhook,
  type SmtpReceiver,
  type WebhookReceiver,
} from './receivers.ts';

// Monitors may probe every second in tests (the server default minimum is 5 s).
process.env['LEDGE_LB_MIN_INTERVAL'] = '1';

interface AlertData {
  pool_id: string;
  pool_name: string;
  origin_name: string;
  new_health: string;
  event_source: string;
  reason: string;
}

describe('end to end: real origins, monitor, checker, webhook receiver and SMTP server', () => {
  let ledge: TestLedge;
  let hooks: WebhookReceiver;
  let smtp: SmtpReceiver;
  let a: TestOrigin;
  let b: TestOrigin;
  let poolId: string;
  const policy: Record<string, string> = {};
  // The checker's schedule runs on this clock, moved one interval per probe round; probes, webhooks and
  // mail are real I/O on real time.
  const clock = new ManualClock();
  const { round, untilRound } = probeRounds(clock, () => ledge);
  /** Probe rounds until the pool's health event `newHealth` is recorded (its alerts are then on their way). */
  const untilPoolIs = (newHealth: string) =>
    untilRound(
      async () =>
        (await ledge.server.platform.loadBalancing.health.events(ledge.accountId, poolId)).find(
          (e) => e.eventSource === 'pool' && e.newHealth === newHealth,
        ),
      `pool ${newHealth}`,
    );

  const lb = (method: string, path: string, body?: unknown) =>
    call(ledge, method, `/accounts/${ledge.accountId}/load_balancers${path}`, body);
  const createPolicy = async (name: string, body: Record<string, unknown>) => {
    const res = await call(ledge, 'POST', `${alerting(ledge)}/policies`, {
      name,
      enabled: true,
      alert_type: 'load_balancing_health_alert',
      ...body,
    });
    expect(res.status).toBe(200);
    policy[name] = (res.body.result as { id: string }).id;
  };
  const of =
    (name: string, match: Partial<AlertData> = {}) =>
    (hook: ReceivedWebhook) =>
      hook.body['policy_id'] === policy[name] &&
      Object.entries(match).every(([k, v]) => (hook.body['data'] as Record<string, unknown>)[k] === v);

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    hooks = await startWebhookReceiver();
    ledge = await startLedge({ flags: { smtpUrl: smtp.url }, clock });
    a = await TestOrigin.start();
    b = await TestOrigin.start();
    const monitor = await lb('POST', '/monitors', {
      type: 'http',
      interval: 1,
      timeout: 1,
      retries: 0,
      expected_codes: '2xx',
    });
    const other = await lb('POST', '/pools', {
      name: 'elsewhere',
      origins: [{ name: 'x', address: '127.0.0.1', port: a.port }],
    });
    const pool = await lb('POST', '/pools', {
      name: 'web',
      monitor: (monitor.body.result as { id: string }).id,
      minimum_origins: 2,
      notification_email: 'legacy@example.com',
      origins: [
        { name: 'origin-a', address: '127.0.0.1', port: a.port },
        { name: 'origin-b', address: '127.0.0.1', port: b.port },
      ],
    });
    expect(pool.status).toBe(200);
    poolId = (pool.body.result as { id: string }).id;

    const hook = await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, {
      name: 'receiver',
      url: hooks.url,
      secret: 'e2e-secret',
    });
    const webhooks = [{ id: (hook.body.result as { id: string }).id }];
    await createPolicy('all', {
      mechanisms: { webhooks, email: [{ id: 'oncall@example.com' }] },
      filters: { pool_id: [poolId] },
    });
    await createPolicy('origin recoveries', {
      mechanisms: { webhooks },
      filters: { new_health: ['Healthy'], event_source: ['origin'] },
    });
    await createPolicy('pool outages', {
      mechanisms: { webhooks },
      filters: { new_health: ['Unhealthy'], event_source: ['pool'] },
    });
    await createPolicy('other pool', {
      mechanisms: { webhooks },
      filters: { pool_id: [(other.body.result as { id: string }).id] },
    });
  });
  afterAll(async () => {
    await ledge.close();
    await hooks.close();
    await smtp.close();
    await a.stop().catch(() => undefined);
    await b.stop().catch(() => undefined);
  });

  it('sends origin and pool Unhealthy alerts when an origin stops', async () => {
    // Both origins answer: over three probe rounds the checker records no transition, so nothing is sent.
    for (let i = 0; i < 3; i++) await round();
    await ledge.server.platform.notifications.dispatcher.settled();
    expect(hooks.received.filter((h) => h.body['policy_id'] !== undefined)).toEqual([]);

    await b.stop();
    await untilPoolIs('Unhealthy');
    const [origin] = await hooks.waitFor(1, of('all', { event_source: 'origin', new_health: 'Unhealthy' }));
    const [pool] = await hooks.waitFor(1, of('all', { event_source: 'pool', new_health: 'Unhealthy' }));
    expect(origin?.headers['cf-webhook-auth']).toBe('e2e-secret');
    expect(origin?.body).toMatchObject({
      name: 'all',
      policy_name: 'all',
      account_id: ledge.accountId,
      alert_type: 'load_balancing_health_alert',
      alert_event: 'ALERT_STATE_EVENT_START',
      data: {
        pool_id: poolId,
        pool_name: 'web',
        origin_name: 'origin-b',
        new_health: 'Unhealthy',
        event_source: 'origin',
      },
    });
    expect((origin?.body['data'] as AlertData).reason).not.toBe('No failures');
    expect(typeof origin?.body['ts']).toBe('number');
    expect(pool?.body['data']).toMatchObject({ pool_id: poolId, event_source: 'pool', new_health: 'Unhealthy' });
    await hooks.waitFor(1, of('pool outages', { event_source: 'pool' }));

    const [mail] = await smtp.waitFor(
      1,
      (m) => m.to.includes('oncall@example.com') && /origin origin-b/.test(m.subject),
    );
    expect(mail?.subject).toContain('is now Unhealthy');
    await smtp.waitFor(1, (m) => m.to.includes('legacy@example.com') && /Pool health alert/.test(m.subject));
    await smtp.waitFor(1, (m) => m.to.includes('legacy@example.com') && /deprecated/.test(m.subject));
  });

  it('sends Healthy alerts when the origin starts again, and nothing to policies that exclude the events', async () => {
    await b.listen(b.port);
    await untilPoolIs('Healthy');
    const [origin] = await hooks.waitFor(1, of('all', { event_source: 'origin', new_health: 'Healthy' }));
    await hooks.waitFor(1, of('all', { event_source: 'pool', new_health: 'Healthy' }));
    const [recovery] = await hooks.waitFor(
      1,
      of('origin recoveries', { origin_name: 'origin-b', new_health: 'Healthy' }),
    );
    expect(origin?.body['alert_event']).toBe('ALERT_STATE_EVENT_END');
    const start = hooks.received.find(of('all', { event_source: 'origin', new_health: 'Unhealthy' }));
    expect(origin?.body['alert_correlation_id']).toBe(start?.body['alert_correlation_id']);
    expect(recovery?.headers['cf-webhook-auth']).toBe('e2e-secret');

    // Every alert due is sent and recorded: one that has not reached the receiver by then never will.
    await ledge.server.platform.notifications.dispatcher.settled();
    expect(hooks.received.filter(of('other pool'))).toEqual([]);
    expect(hooks.received.filter(of('origin recoveries', { new_health: 'Unhealthy' }))).toEqual([]);
    expect(hooks.received.filter(of('pool outages', { new_health: 'Healthy' }))).toEqual([]);
    expect(hooks.received.filter(of('origin recoveries', { event_source: 'pool' }))).toEqual([]);
    // Every delivery was answered 2xx on the first attempt.
    const history = await call(ledge, 'GET', `${alerting(ledge)}/history?per_page=100`);
    const rows = history.body.result as { status: string; mechanism_type: string }[];
    expect(rows.length).toBeGreaterThanOrEqual(8);
    expect(rows.every((row) => row.status === 'delivered')).toBe(true);
  });
});
