import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HealthSamples } from '../../src/load-balancing/health/health-samples.ts';
import type { OriginState } from '../../src/load-balancing/health/health-state.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { call, createPool } from '../notifications/api-helpers.ts';
import { waitUntil } from '../notifications/receivers.ts';
import { TestOrigin } from './helpers.ts';
import { systemClock } from '../../src/shared/clock.ts';

// Monitors may probe every second in tests (the server default minimum is 5 s).
process.env['LEDGE_LB_MIN_INTERVAL'] = '1';

interface History {
  range: string;
  step_seconds: number;
  points: { t: number; origin: string; checks: number; healthy: number; rtt_avg_ms: number | null }[];
}

let ledge: TestLedge;
let origin: TestOrigin;
let poolId: string;
const lb = () => `/accounts/${ledge.accountId}/load_balancers`;

beforeAll(async () => {
  ledge = await startLedge();
  origin = await TestOrigin.start();
  const monitor = await call(ledge, 'POST', `${lb()}/monitors`, { type: 'http', interval: 1, timeout: 1, retries: 0 });
  poolId = await createPool(ledge, {
    name: 'charted',
    monitor: (monitor.body.result as { id: string }).id,
    origins: [{ name: 'only', address: '127.0.0.1', port: origin.port }],
  });
});
afterAll(async () => {
  await ledge?.close();
  await origin?.stop().catch(() => undefined);
});

const history = async (range: string) => {
  const res = await call(ledge, 'GET', `${lb()}/pools/${poolId}/health/history?range=${range}`);
  expect(res.status).toBe(200);
  return res.body.result as History;
};

describe('GET /pools/{id}/health/history', () => {
  it('gives each origin and the pool a healthy share and RTT per minute, and sees an outage', async () => {
    const healthy = await waitUntil(
      async () => {
        const h = await history('hour');
        const points = h.points.filter((p) => p.origin === 'only');
        return points.reduce((sum, p) => sum + p.checks, 0) >= 2 ? h : undefined;
      },
      15_000,
      'two checks in the samples',
    );
    expect(healthy.step_seconds).toBe(60);
    const mine = healthy.points.filter((p) => p.origin === 'only');
    expect(mine.every((p) => p.healthy === 1 && p.rtt_avg_ms !== null && p.rtt_avg_ms >= 0)).toBe(true);
    expect(healthy.points.some((p) => p.origin === '' && p.healthy === 1)).toBe(true);
    for (const p of healthy.points) expect(p.t % 60).toBe(0);

    await origin.stop();
    const down = await waitUntil(
      async () => {
        const h = await history('hour');
        return h.points.some((p) => p.origin === '' && p.healthy < 1) ? h : undefined;
      },
      15_000,
      'an unhealthy pool sample',
    );
    expect(down.points.some((p) => p.origin === 'only' && p.healthy < 1)).toBe(true);

    const day = await history('day');
    expect(day.step_seconds).toBe(300);
    expect(day.points.every((p) => p.t % 300 === 0)).toBe(true);
    expect((await history('week')).step_seconds).toBe(3600);
  });

  it('refuses an unknown range and an unknown pool', async () => {
    const bad = await call(ledge, 'GET', `${lb()}/pools/${poolId}/health/history?range=month`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]?.code).toBe(1002);
    const missing = await call(ledge, 'GET', `${lb()}/pools/${'0'.repeat(32)}/health/history`);
    expect(missing.status).toBe(404);
  });
});

describe('health sample retention', () => {
  it('rolls minutes older than a day into hours and drops hours older than a week', async () => {
    const db = ledge.server.platform.db;
    const samples = new HealthSamples(db, systemClock);
    const now = Date.parse('2026-03-10T12:30:00Z');
    const state = (healthy: boolean, rttMs: number): OriginState => ({
      originName: 'o',
      address: '192.0.2.1',
      healthy,
      successes: 0,
      failures: 0,
      failureReason: '',
      responseCode: null,
      rttMs,
      checkedAt: '',
    });
    const at = (hoursAgo: number, minute: number) =>
      new Date(now - hoursAgo * 3600_000 + minute * 60_000).toISOString();
    await db.transaction(async (tx) => {
      // Two days ago, three minutes of one hour: one healthy at 10 ms, one unhealthy at 30 ms, one healthy at 20 ms.
      await samples.addOrigin(tx, 'retained', state(true, 10), at(48, 0));
      await samples.addOrigin(tx, 'retained', state(false, 30), at(48, 1));
      await samples.addOrigin(tx, 'retained', state(true, 20), at(48, 2));
      // Ten days ago: past the week.
      await samples.addOrigin(tx, 'retained', state(true, 5), at(240, 0));
      // An hour ago: stays at minute resolution.
      await samples.addOrigin(tx, 'retained', state(true, 7), at(1, 0));
    });
    await samples.rollUp(now);
    const rows = await db.all<{ resolution: number; n: number }>(
      "SELECT resolution, COUNT(*) AS n FROM lb_health_samples WHERE pool_id = 'retained' GROUP BY resolution ORDER BY resolution",
    );
    expect(rows.map((r) => [Number(r.resolution), Number(r.n)])).toEqual([
      [60, 1],
      [3600, 1],
    ]);
    const week = await samples.series('retained', 'week', now);
    expect(week).toHaveLength(2);
    const rolled = week[0]!;
    expect(rolled.checks).toBe(3);
    expect(rolled.healthy).toBeCloseTo(2 / 3);
    expect(rolled.rtt_avg_ms).toBeCloseTo(20);
    expect(rolled.rtt_max_ms).toBe(30);
    // A second roll-up changes nothing.
    await samples.rollUp(now);
    expect(await samples.series('retained', 'week', now)).toEqual(week);
  });
});
