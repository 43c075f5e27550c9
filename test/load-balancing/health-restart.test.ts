import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { startLedge, tempDir } from '../helpers/ledge.ts';
import { lbClient, TestOrigin, waitFor } from './helpers.ts';

process.env['LEDGE_LB_MIN_INTERVAL'] = '1';

const dataDir = tempDir();
const origin = new TestOrigin();
afterAll(async () => {
  await origin.stop().catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('health state across restarts', () => {
  it('keeps origin and pool health, and does not repeat events after a restart', async () => {
    await origin.listen(0);
    origin.mode = { kind: 'status', status: 502 };
    let ledge = await startLedge({ dataDir });
    let call = lbClient(ledge);
    const monitor = (await call('POST', '/monitors', { interval: 1, timeout: 1, retries: 0 })).body.result;
    const pool = (
      await call('POST', '/pools', {
        name: 'restart',
        monitor: monitor.id,
        origins: [{ name: 'web', address: '127.0.0.1', port: origin.port }],
      })
    ).body.result;
    const events = () => ledge.server.platform.loadBalancing.health.events(ledge.accountId, pool.id);
    await waitFor(async () => ((await events()).length === 2 ? true : undefined), 15_000, 'origin and pool Unhealthy');
    await ledge.close();

    ledge = await startLedge({ dataDir });
    call = lbClient(ledge);
    // Before any new probe, /health already answers from the stored state.
    const view = (await call('GET', `/pools/${pool.id}/health`)).body.result;
    expect(view.pop_health.local.healthy).toBe(false);
    expect(Object.values(view.pop_health.local.origins[0])[0]).toMatchObject({
      healthy: false,
      failure_reason: 'Response code mismatch error',
      response_code: 502,
    });
    const probesBefore = origin.requests.length;
    await waitFor(
      () => (origin.requests.length >= probesBefore + 2 ? true : undefined),
      10_000,
      'probes after restart',
    );
    expect((await events()).map((e) => `${e.eventSource}:${e.newHealth}`)).toEqual([
      'origin:Unhealthy',
      'pool:Unhealthy',
    ]);

    origin.mode = { kind: 'ok' };
    await waitFor(async () => ((await events()).length === 4 ? true : undefined), 15_000, 'Healthy events');
    expect((await events()).slice(2).map((e) => `${e.eventSource}:${e.newHealth}`)).toEqual([
      'origin:Healthy',
      'pool:Healthy',
    ]);
    await ledge.close();
  });
});
