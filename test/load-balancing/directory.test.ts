import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigChange, LoadBalancerDirectory } from '../../src/load-balancing/index.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { apiClient, type ApiCall } from '../zones/helpers.ts';
import { TestOrigin, waitFor } from './helpers.ts';

process.env['LEDGE_LB_MIN_INTERVAL'] = '1';

/** The data plane's read side: routes by hostname, pool health from real probes, the change signal. */
let ledge: TestLedge;
let call: ApiCall;
let directory: LoadBalancerDirectory;
let origin: TestOrigin;
const lbPath = () => `/accounts/${ledge.accountId}/load_balancers`;

beforeAll(async () => {
  ledge = await startLedge();
  call = apiClient(ledge);
  directory = ledge.server.platform.loadBalancing.directory;
  origin = await TestOrigin.start();
});
afterAll(async () => {
  await ledge.close();
  await origin.stop();
});

describe('LoadBalancerDirectory', () => {
  it('finds a route with ordered pools, origins, monitors and fallback, and follows every change', async () => {
    const zone = (await call('POST', '/zones', { name: 'dir.example', account: { id: ledge.accountId } })).body.result;
    const monitor = (
      await call('POST', `${lbPath()}/monitors`, { type: 'http', interval: 1, timeout: 1, retries: 0, path: '/' })
    ).body.result;
    const checked = (
      await call('POST', `${lbPath()}/pools`, {
        name: 'checked',
        monitor: monitor.id,
        origin_steering: { policy: 'least_connections' },
        origins: [
          { name: 'live', address: '127.0.0.1', port: origin.port },
          { name: 'dead', address: '127.0.0.1', port: 9, enabled: false },
        ],
      })
    ).body.result;
    const plain = (
      await call('POST', `${lbPath()}/pools`, { name: 'plain', origins: [{ name: 'o', address: '192.0.2.5' }] })
    ).body.result;
    const changes: ConfigChange[] = [];
    const stop = directory.onChange((change) => changes.push(change));
    const version = directory.version;

    const lb = (
      await call('POST', `/zones/${zone.id}/load_balancers`, {
        name: 'app.dir.example',
        default_pools: [plain.id, checked.id],
        fallback_pool: plain.id,
        steering_policy: 'random',
      })
    ).body.result;
    expect(directory.version).toBe(version + 1);
    expect(changes.at(-1)).toMatchObject({ kind: 'load_balancer', id: lb.id, hostnames: ['app.dir.example'] });

    const route = await directory.findByHostname('APP.dir.example:8443');
    expect(route).toBeDefined();
    expect(route!.loadBalancer.id).toBe(lb.id);
    expect(route!.accountId).toBe(ledge.accountId);
    expect(route!.zoneId).toBe(zone.id);
    expect(route!.pools.map((p) => p.pool.name)).toEqual(['plain', 'checked']);
    expect(route!.pools[1]!.monitor?.id).toBe(monitor.id);
    expect(route!.pools[1]!.pool.origin_steering).toEqual({ policy: 'least_connections' });
    expect(route!.pools[1]!.pool.origins.map((o) => [o.name, o.enabled])).toEqual([
      ['live', true],
      ['dead', false],
    ]);
    expect(route!.fallbackPool?.pool.id).toBe(plain.id);
    // Cached until the next configuration change.
    expect(await directory.findByHostname('app.dir.example')).toBe(route);
    expect(await directory.findByHostname('dir.example')).toBeUndefined();
    expect(await directory.findByHostname('')).toBeUndefined();

    // Health: a pool nothing probes counts as healthy; a probed one follows the checker.
    expect(await directory.poolHealth(route!.pools[0]!)).toMatchObject({ monitored: false, healthy: true });
    const healthy = await waitFor(async () => {
      const h = await directory.poolHealth(route!.pools[1]!);
      return h.healthy && (await ledge.server.platform.loadBalancing.health.originStates(checked.id)).has('live')
        ? h
        : undefined;
    });
    expect(healthy.monitored).toBe(true);
    expect(healthy.origins.get('live')).toBe(true);
    origin.mode = { kind: 'status', status: 503 };
    const sick = await waitFor(async () => {
      const h = await directory.poolHealth(route!.pools[1]!);
      return h.healthy ? undefined : h;
    });
    expect(sick.origins.get('live')).toBe(false);
    origin.mode = { kind: 'ok' };

    // A pool change is signalled (cached routes go by the version, so it names no hostnames); a monitor
    // change is signalled too.
    const before = changes.at(-1)!.version;
    await call('PATCH', `${lbPath()}/pools/${plain.id}`, { enabled: false });
    expect(changes.at(-1)).toMatchObject({ kind: 'pool', id: plain.id, hostnames: [] });
    expect(changes.at(-1)!.version).toBeGreaterThan(before);
    const afterChange = await directory.findByHostname('app.dir.example');
    expect(afterChange).not.toBe(route);
    expect(afterChange!.pools[0]!.pool.enabled).toBe(false);
    await call('PATCH', `${lbPath()}/monitors/${monitor.id}`, { description: 'changed' });
    expect(changes.at(-1)).toMatchObject({ kind: 'monitor', id: monitor.id });

    // Renaming moves the route; deleting removes it.
    await call('PATCH', `/zones/${zone.id}/load_balancers/${lb.id}`, { name: 'www.dir.example' });
    expect(changes.at(-1)!.hostnames).toEqual(['app.dir.example', 'www.dir.example']);
    expect(await directory.findByHostname('app.dir.example')).toBeUndefined();
    await call('DELETE', `/zones/${zone.id}/load_balancers/${lb.id}`);
    expect(await directory.findByHostname('www.dir.example')).toBeUndefined();
    stop();
    const versions = changes.map((c) => c.version);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(new Set(versions).size).toBe(versions.length);
  });
});
