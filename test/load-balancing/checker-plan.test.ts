import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { lbClient, TestOrigin, waitFor, type LbCall } from './helpers.ts';

process.env['LEDGE_LB_MIN_INTERVAL'] = '1';

let ledge: TestLedge;
let call: LbCall;
const origins: TestOrigin[] = [];
beforeAll(async () => {
  ledge = await startLedge();
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
  await waitFor(() => (origin.requests.length > 0 ? true : undefined));
  return { origin, monitor, pool };
}

const quietFor = async (origin: TestOrigin, ms: number) => {
  const before = origin.requests.length;
  await new Promise((r) => setTimeout(r, ms));
  return origin.requests.length - before;
};
const events = (poolId: string) => ledge.server.platform.loadBalancing.health.events(ledge.accountId, poolId);

describe('what the checker probes follows the configuration', () => {
  it('a monitor change applies to the pools that use it', async () => {
    const { monitor, pool } = await setup('monitor-change');
    expect((await call('PATCH', `/monitors/${monitor.id}`, { expected_codes: '5xx' })).status).toBe(200);
    const down = await waitFor(async () => (await events(pool.id)).find((e) => e.eventSource === 'origin'));
    expect(down).toMatchObject({ newHealth: 'Unhealthy', reason: 'Response code mismatch error' });
  });

  it('a disabled pool is not probed and reports an empty pop_health; enabling it resumes checks', async () => {
    const { origin, pool } = await setup('disable-me');
    expect((await call('PATCH', `/pools/${pool.id}`, { enabled: false })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300)); // a probe already in flight may still land
    expect(await quietFor(origin, 1500)).toBe(0);
    expect((await call('GET', `/pools/${pool.id}/health`)).body.result).toEqual({ pool_id: pool.id, pop_health: {} });
    const before = origin.requests.length;
    await call('PATCH', `/pools/${pool.id}`, { enabled: true });
    await waitFor(() => (origin.requests.length > before ? true : undefined), 5000, 'a probe after enabling');
    await waitFor(async () => {
      const view = (await call('GET', `/pools/${pool.id}/health`)).body.result;
      return view.pop_health.local?.origins[0]?.['127.0.0.1']?.response_code === 200 ? true : undefined;
    });
  });

  it('removing the monitor stops the checks', async () => {
    const { origin, pool } = await setup('unmonitor-me');
    await call('PATCH', `/pools/${pool.id}`, { monitor: null });
    await new Promise((r) => setTimeout(r, 300));
    expect(await quietFor(origin, 1500)).toBe(0);
    expect((await call('GET', `/pools/${pool.id}/health`)).body.result.pop_health).toEqual({});
  });

  it('a deleted pool is no longer probed', async () => {
    const { origin, pool } = await setup('delete-me');
    await call('DELETE', `/pools/${pool.id}`);
    await new Promise((r) => setTimeout(r, 300));
    expect(await quietFor(origin, 1500)).toBe(0);
  });

  it('a changed origin address starts from a clean state', async () => {
    const { origin, pool } = await setup('readdress');
    const other = await TestOrigin.start();
    origins.push(other);
    await call('PATCH', `/pools/${pool.id}`, { origins: [{ name: 'web', address: 'localhost', port: other.port }] });
    await waitFor(() => (other.requests.length > 0 ? true : undefined));
    await new Promise((r) => setTimeout(r, 300));
    expect(await quietFor(origin, 1200)).toBe(0);
    const view = (await call('GET', `/pools/${pool.id}/health`)).body.result;
    expect(Object.keys(view.pop_health.local.origins[0])).toEqual(['localhost']);
  });
});
