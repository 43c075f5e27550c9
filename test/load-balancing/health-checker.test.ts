import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthEvent } from '../../src/load-balancing/index.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { ManualClock } from '../helpers/manual-clock.ts';
import { lbClient, probeRounds, TestOrigin, type Json, type LbCall } from './helpers.ts';

// Monitors may probe every second in tests (the server default minimum is 5 s).
process.env['LEDGE_LB_MIN_INTERVAL'] = '1';

let ledge: TestLedge;
let call: LbCall;
// The checker's schedule runs on this clock: a test moves it one interval at a time (round()) instead of
// waiting the intervals out. The probes themselves are real HTTP and TCP on real time.
const clock = new ManualClock();
const published: HealthEvent[] = [];
const origins: TestOrigin[] = [];
beforeAll(async () => {
  ledge = await startLedge({ clock });
  call = lbClient(ledge);
  ledge.server.platform.healthEvents.subscribe(async (event) => void published.push(event));
});
afterAll(async () => {
  await ledge.close();
  for (const origin of origins) await origin.stop().catch(() => undefined);
});

async function origin(): Promise<TestOrigin> {
  const started = await TestOrigin.start();
  origins.push(started);
  return started;
}

/** A pool of loopback origins checked every second with a 1 s timeout and no retries. */
async function checkedPool(
  name: string,
  servers: TestOrigin[],
  monitor: Record<string, unknown> = {},
  pool: Record<string, unknown> = {},
) {
  const created = await call('POST', '/monitors', {
    interval: 1,
    timeout: 1,
    retries: 0,
    expected_codes: '2xx',
    ...monitor,
  });
  expect(created.status).toBe(200);
  const body = {
    name,
    monitor: created.body.result.id,
    minimum_origins: servers.length,
    origins: servers.map((s, i) => ({ name: `origin-${i}`, address: '127.0.0.1', port: s.port })),
    ...pool,
  };
  const res = await call('POST', '/pools', body);
  expect(res.status).toBe(200);
  return res.body.result as { id: string; name: string; monitor: string };
}

const eventsOf = (poolId: string) => ledge.server.platform.loadBalancing.health.events(ledge.accountId, poolId);
const health = async (poolId: string): Promise<Json> => (await call('GET', `/pools/${poolId}/health`)).body.result;
const originHealth = async (poolId: string, index: number): Promise<Json> => {
  const entry = (await health(poolId)).pop_health.local?.origins[index];
  return entry ? Object.values(entry)[0] : undefined;
};

const { round, untilRound } = probeRounds(clock, () => ledge);

const firstCheck = (poolId: string, index = 0) =>
  untilRound(
    async () => ((await originHealth(poolId, index))?.response_code === 200 ? true : undefined),
    'first check',
  );
const waitEvent = (poolId: string, match: Partial<HealthEvent>) =>
  untilRound(
    async () =>
      (await eventsOf(poolId)).find((e) => Object.entries(match).every(([k, v]) => e[k as keyof HealthEvent] === v)),
    JSON.stringify(match),
  );

describe('health checker with real origins', () => {
  it('reports healthy origins in the reference shape and emits no event while nothing changes', async () => {
    const a = await origin();
    const pool = await checkedPool('steady', [a]);
    const first = await untilRound(async () => {
      const h = await originHealth(pool.id, 0);
      return h?.response_code === 200 ? h : undefined;
    }, 'first check');
    expect(first).toMatchObject({ healthy: true, failure_reason: 'No failures', response_code: 200 });
    expect(first.rtt).toMatch(/^\d+\.\dms$/);
    const view = await health(pool.id);
    expect(view).toEqual({
      pool_id: pool.id,
      pop_health: { local: { healthy: true, origins: [{ '127.0.0.1': first }] } },
    });
    await untilRound(() => (a.requests.length >= 3 ? true : undefined), 'three probes');
    expect(await eventsOf(pool.id)).toEqual([]);
    expect(a.requests[0]?.headers['user-agent']).toContain(`pool-id: ${pool.id}`);
  });

  it('fails by status: origin and pool become Unhealthy with events, then Healthy again', async () => {
    const a = await origin();
    const pool = await checkedPool('by-status', [a], {}, { notification_email: 'ops@example.com' });
    await firstCheck(pool.id);
    a.mode = { kind: 'status', status: 503 };
    const down = await waitEvent(pool.id, { eventSource: 'origin', newHealth: 'Unhealthy' });
    expect(down).toMatchObject({
      accountId: ledge.accountId,
      poolId: pool.id,
      poolName: 'by-status',
      originName: 'origin-0',
      originAddress: '127.0.0.1',
      reason: 'Response code mismatch error',
      legacyNotificationEmail: 'ops@example.com',
    });
    expect(Date.parse(down.occurredAt)).not.toBeNaN();
    const poolDown = await waitEvent(pool.id, { eventSource: 'pool', newHealth: 'Unhealthy' });
    expect(poolDown).toMatchObject({ originName: null, originAddress: null, reason: 'Response code mismatch error' });
    expect(await originHealth(pool.id, 0)).toMatchObject({
      healthy: false,
      failure_reason: 'Response code mismatch error',
      response_code: 503,
    });
    expect((await health(pool.id)).pop_health.local.healthy).toBe(false);

    a.mode = { kind: 'ok' };
    await waitEvent(pool.id, { eventSource: 'origin', newHealth: 'Healthy', reason: 'No failures' });
    await waitEvent(pool.id, { eventSource: 'pool', newHealth: 'Healthy' });
    // The bus saw exactly what the table holds, in the same order.
    expect(published.filter((e) => e.poolId === pool.id)).toEqual(await eventsOf(pool.id));
    expect((await eventsOf(pool.id)).map((e) => `${e.eventSource}:${e.newHealth}`)).toEqual([
      'origin:Unhealthy',
      'pool:Unhealthy',
      'origin:Healthy',
      'pool:Healthy',
    ]);
  });

  it('fails by body: expected_body is a case-insensitive match on the first 10 KB', async () => {
    const a = await origin();
    a.mode = { kind: 'body', body: 'Status: ALL GOOD' };
    const pool = await checkedPool('by-body', [a], { expected_body: 'all good' });
    await firstCheck(pool.id);
    expect((await originHealth(pool.id, 0)).healthy).toBe(true);
    a.mode = { kind: 'body', body: `${'x'.repeat(11 * 1024)} all good` };
    const down = await waitEvent(pool.id, { eventSource: 'origin', newHealth: 'Unhealthy' });
    expect(down.reason).toBe('Response body mismatch error');
  });

  it('fails by timeout', async () => {
    const a = await origin();
    const pool = await checkedPool('by-timeout', [a]);
    await firstCheck(pool.id);
    a.mode = { kind: 'hang' };
    const down = await waitEvent(pool.id, { eventSource: 'origin', newHealth: 'Unhealthy' });
    expect(down.reason).toBe('HTTP timeout occurred');
    expect((await originHealth(pool.id, 0)).response_code).toBeUndefined();
    // Answering again: the rounds of later tests need not wait out this pool's probe timeouts.
    a.mode = { kind: 'ok' };
  });

  it('fails when the origin stops, and recovers when it listens again', async () => {
    const a = await origin();
    const pool = await checkedPool('by-stopping', [a]);
    await firstCheck(pool.id);
    const port = a.port;
    await a.stop();
    const down = await waitEvent(pool.id, { eventSource: 'origin', newHealth: 'Unhealthy' });
    expect(down.reason).toBe('TCP connection failed');
    const again = new TestOrigin();
    await again.listen(port);
    origins.push(again);
    await waitEvent(pool.id, { eventSource: 'origin', newHealth: 'Healthy' });
  });

  it('respects consecutive_down and consecutive_up', async () => {
    const a = await origin();
    const pool = await checkedPool('thresholds', [a], { consecutive_down: 3, consecutive_up: 2 });
    await firstCheck(pool.id);
    a.mode = { kind: 'status', status: 500 };
    const failingFrom = a.requests.length;
    await waitEvent(pool.id, { eventSource: 'origin', newHealth: 'Unhealthy' });
    expect(a.requests.length - failingFrom).toBeGreaterThanOrEqual(3);
    a.mode = { kind: 'ok' };
    const healthyFrom = a.requests.length;
    await waitEvent(pool.id, { eventSource: 'origin', newHealth: 'Healthy' });
    expect(a.requests.length - healthyFrom).toBeGreaterThanOrEqual(2);
  });

  it('keeps a pool Healthy while minimum_origins are healthy, and skips disabled origins', async () => {
    const [a, b, c] = [await origin(), await origin(), await origin()];
    const pool = await checkedPool('minimum', [a, b, c], {}, { minimum_origins: 2 });
    await firstCheck(pool.id, 1);
    a.mode = { kind: 'status', status: 500 };
    await waitEvent(pool.id, { eventSource: 'origin', newHealth: 'Unhealthy', originName: 'origin-0' });
    // Two more rounds with origin-0 down: two of three healthy is enough, so the pool stays Healthy.
    await round();
    await round();
    expect((await eventsOf(pool.id)).filter((e) => e.eventSource === 'pool')).toEqual([]);
    // Disabling a healthy origin leaves one healthy of two required: the pool goes Unhealthy.
    const current = (await call('GET', `/pools/${pool.id}`)).body.result;
    current.origins[2].enabled = false;
    expect((await call('PUT', `/pools/${pool.id}`, current)).status).toBe(200);
    await waitEvent(pool.id, { eventSource: 'pool', newHealth: 'Unhealthy' });
    const seen = c.requests.length;
    const seenB = b.requests.length;
    await round();
    await round();
    expect(b.requests.length).toBeGreaterThan(seenB);
    expect(c.requests.length).toBe(seen);
    expect((await health(pool.id)).pop_health.local.origins).toHaveLength(2);
  });

  it('writes the event and the state change in one transaction with the listeners', async () => {
    const a = await origin();
    const pool = await checkedPool('atomic', [a]);
    await firstCheck(pool.id);
    let failures = 0;
    const unsubscribe = ledge.server.platform.healthEvents.subscribe(async (event) => {
      if (event.poolId === pool.id && failures < 2) {
        failures++;
        throw new Error('consumer failed');
      }
    });
    a.mode = { kind: 'status', status: 500 };
    await untilRound(() => (failures >= 2 ? true : undefined), 'two failed writes');
    // Both attempts rolled back: no event row and the origin is still stored as healthy.
    expect(await eventsOf(pool.id)).toEqual([]);
    expect((await ledge.server.platform.loadBalancing.health.originStates(pool.id)).get('origin-0')?.healthy).toBe(
      true,
    );
    const down = await waitEvent(pool.id, { eventSource: 'origin', newHealth: 'Unhealthy' });
    expect(down.reason).toBe('Response code mismatch error');
    unsubscribe();
  });
});
