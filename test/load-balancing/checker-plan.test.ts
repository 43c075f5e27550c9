import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { ManualClock } from '../helpers/manual-clock.ts';
import { lbClient, probeRounds, TestOrigin, type LbCall } from './helpers.ts';

process.env['LEDGE_LB_MIN_INTERVAL'] = '1';

let ledge: TestLedge;
let call: LbCall;
// The checker's schedule runs on this clock, moved one interval per round (probes are real HTTP on real time).
const clock = new ManualClock();
const origins: TestOrigin[] = [];
beforeAll(async () => {
  ledge = await startLedge({ clock });
  call = lbClient(ledge);
});
afterAll(async () => {
  await ledge.close();
  for (const origin of origins) await origin.stop();
});

async function setup(name: string) {
  const origin = await TestOrigin.start();
  origins.push(origin);
  const monitor = (await call('POST', '/monitors', { interval: 1, timeout: 1, retries: 0 })).body.result;
  const pool = (
    await call('POST', '/pools', {
      name,
      monitor: monitor.id,
      origins: [{ name: 'web', address: '127.0.0.1', port: origin.port }],
    })
  ).body.result;
  await untilRound(() => (origin.requests.length > 0 ? true : undefined), 'a first probe');
  return { origin, monitor, pool };
}

/** settled(): every probe started so far has been answered and recorded. */
const { settled, round, untilRound } = probeRounds(clock, () => ledge);

/** How many probes the origin got during two more rounds (a checked origin gets at least one). */
const probesInTwoRounds = async (origin: TestOrigin) => {
  const before = origin.requests.length;
  await round();
  await round();
  return origin.requests.length - before;
};
const events = (poolId: string) => ledge.server.platform.loadBalancing.health.events(ledge.accountId, poolId);

describe('what the checker probes follows the configuration', () => {
  it('a monitor change applies to the pools that use it', async () => {
    const { monitor, pool } = await setup('monitor-change');
    expect((await call('PATCH', `/monitors/${monitor.id}`, { expected_codes: '5xx' })).status).toBe(200);
    const down = await untilRound(async () => (await events(pool.id)).find((e) => e.eventSource === 'origin'), 'event');
    expect(down).toMatchObject({ newHealth: 'Unhealthy', reason: 'Response code mismatch error' });
  });

  it('a disabled pool is not probed and reports an empty pop_health; enabling it resumes checks', async () => {
    const { origin, pool } = await setup('disable-me');
    expect((await call('PATCH', `/pools/${pool.id}`, { enabled: false })).status).toBe(200);
    await settled(); // a probe already in flight may still land
    expect(await probesInTwoRounds(origin)).toBe(0);
    expect((await call('GET', `/pools/${pool.id}/health`)).body.result).toEqual({ pool_id: pool.id, pop_health: {} });
    const before = origin.requests.length;
    await call('PATCH', `/pools/${pool.id}`, { enabled: true });
    await untilRound(() => (origin.requests.length > before ? true : undefined), 'a probe after enabling', 5);
    await untilRound(async () => {
      const view = (await call('GET', `/pools/${pool.id}/health`)).body.result;
      return view.pop_health.local?.origins[0]?.['127.0.0.1']?.response_code === 200 ? true : undefined;
    }, 'a healthy check');
  });

  it('removing the monitor stops the checks', async () => {
    const { origin, pool } = await setup('unmonitor-me');
    await call('PATCH', `/pools/${pool.id}`, { monitor: null });
    await settled();
    expect(await probesInTwoRounds(origin)).toBe(0);
    expect((await call('GET', `/pools/${pool.id}/health`)).body.result.pop_health).toEqual({});
  });

  it('a deleted pool is no longer probed', async () => {
    const { origin, pool } = await setup('delete-me');
    await call('DELETE', `/pools/${pool.id}`);
    await settled();
    expect(await probesInTwoRounds(origin)).toBe(0);
  });

  it('a changed origin address starts from a clean state', async () => {
    const { origin, pool } = await setup('readdress');
    const other = await TestOrigin.start();
    origins.push(other);
    await call('PATCH', `/pools/${pool.id}`, { origins: [{ name: 'web', address: 'localhost', port: other.port }] });
    await untilRound(() => (other.requests.length > 0 ? true : undefined), 'a probe of the new address');
    await settled();
    expect(await probesInTwoRounds(origin)).toBe(0);
    const view = (await call('GET', `/pools/${pool.id}/health`)).body.result;
    expect(Object.keys(view.pop_health.local.origins[0])).toEqual(['localhost']);
  });
});
