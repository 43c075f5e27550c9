import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { call } from '../notifications/api-helpers.ts';
import { waitFor } from './helpers.ts';
import {
  createLoadBalancer,
  createMonitor,
  createPool,
  createZone,
  NamedOrigin,
  patchLoadBalancer,
  tally,
  trafficPort,
  trafficRequest,
} from './traffic-helpers.ts';

process.env['LEDGE_LB_MIN_INTERVAL'] = '1';

describe('load balancer traffic: hostnames and steering', () => {
  let ledge: TestLedge;
  let port: number;
  let zoneId: string;
  const origins: Record<string, NamedOrigin> = {};
  const pools: Record<string, string> = {};
  let hostCount = 0;

  /** A load balancer on a fresh hostname of the zone; returns the hostname and id. */
  const balance = async (body: Record<string, unknown>) => {
    const name = `lb${++hostCount}.steer.test`;
    const id = await createLoadBalancer(ledge, zoneId, { name, ...body });
    return { name, id };
  };

  beforeAll(async () => {
    ledge = await startLedge();
    port = trafficPort(ledge);
    zoneId = await createZone(ledge, 'steer.test');
    for (const name of ['a1', 'a2', 'b1', 'b2', 'fb']) origins[name] = await NamedOrigin.start(name);
    pools['a'] = await createPool(ledge, 'pool-a', [origins['a1']!, origins['a2']!]);
    pools['b'] = await createPool(ledge, 'pool-b', [origins['b1']!, origins['b2']!]);
    pools['fallback'] = await createPool(ledge, 'pool-fallback', [origins['fb']!]);
  });
  afterAll(async () => {
    await ledge.close();
    for (const origin of Object.values(origins)) await origin.stop();
  });

  it('answers 404 "error code: 1001" for a hostname no load balancer has, and routes by Host without port or case', async () => {
    const unknown = await trafficRequest(port, 'nobody.steer.test');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatch(/^error code: 1001\n.*nobody\.steer\.test/);
    const { name } = await balance({ default_pools: [pools['a']], fallback_pool: pools['fallback'] });
    const answer = await trafficRequest(port, `${name.toUpperCase()}:${port}`);
    expect(answer.status).toBe(200);
    expect(['a1', 'a2']).toContain(answer.body);
  });

  it('off: the first pool in default_pools order takes all traffic; a disabled pool is skipped within 1 s', async () => {
    const { name } = await balance({ default_pools: [pools['b'], pools['a']], fallback_pool: pools['fallback'] });
    const counts = await tally(port, name, 20);
    expect(Object.keys(counts).sort()).toEqual(['b1', 'b2']);
    expect(
      (
        await call(ledge, 'PATCH', `/accounts/${ledge.accountId}/load_balancers/pools/${pools['b']}`, {
          enabled: false,
        })
      ).status,
    ).toBe(200);
    try {
      // Traffic moves by itself once the pool is disabled (its delay is the data plane's, not a bound here).
      await waitFor(
        async () => {
          const answer = await trafficRequest(port, name);
          return ['a1', 'a2'].includes(answer.body) ? true : undefined;
        },
        30_000,
        'traffic on pool a',
      );
      expect(Object.keys(await tally(port, name, 10)).sort()).toEqual(['a1', 'a2']);
    } finally {
      await call(ledge, 'PATCH', `/accounts/${ledge.accountId}/load_balancers/pools/${pools['b']}`, { enabled: true });
    }
  });

  it('random: pools share traffic by random_steering weights', async () => {
    const { name } = await balance({
      default_pools: [pools['a'], pools['b']],
      fallback_pool: pools['fallback'],
      steering_policy: 'random',
      random_steering: { default_weight: 1, pool_weights: { [pools['a']!]: 0.2, [pools['b']!]: 0.8 } },
    });
    const counts = await tally(port, name, 300);
    const onB = (counts['b1'] ?? 0) + (counts['b2'] ?? 0);
    expect(onB + (counts['a1'] ?? 0) + (counts['a2'] ?? 0)).toBe(300);
    // 80% expected; the bounds are more than 5 standard deviations wide.
    expect(onB).toBeGreaterThan(200);
    expect(onB).toBeLessThan(270);
  });

  it('least_outstanding_requests and least_connections: a busy pool gets the next request', async () => {
    for (const policy of ['least_outstanding_requests', 'least_connections']) {
      const { name } = await balance({
        default_pools: [pools['a'], pools['b']],
        fallback_pool: pools['fallback'],
        steering_policy: policy,
      });
      await trafficRequest(port, name); // route cached
      // Each slow request holds its pool; a fresh agent per request so each has its own connection.
      const slow = [0, 1].map(() => trafficRequest(port, name, '/slow/800', { agent: new Agent() }));
      const answers = await Promise.all(slow);
      const poolsUsed = answers.map((answer) => answer.body[0]).sort();
      expect(poolsUsed, policy).toEqual(['a', 'b']);
    }
  });

  it('origin_steering random (by weight), weight 0 and disabled origins get no traffic', async () => {
    const weighted = await createPool(ledge, 'weighted', [
      { origin: origins['a1']!, weight: 1 },
      { origin: origins['a2']!, weight: 0.25 },
      { origin: origins['b1']!, weight: 0 },
      { origin: origins['b2']!, enabled: false },
    ]);
    const { name } = await balance({ default_pools: [weighted], fallback_pool: pools['fallback'] });
    const counts = await tally(port, name, 250);
    expect(Object.keys(counts).sort()).toEqual(['a1', 'a2']);
    // 80% expected on a1.
    expect(counts['a1']).toBeGreaterThan(170);
    expect(counts['a1']).toBeLessThan(230);
  });

  it('origin_steering hash: a client address always reaches the same origin; different clients spread', async () => {
    const hashed = await createPool(ledge, 'hashed', [origins['a1']!, origins['a2']!, origins['b1']!], {
      origin_steering: { policy: 'hash' },
    });
    const { name } = await balance({ default_pools: [hashed], fallback_pool: pools['fallback'] });
    const seen = new Set<string>();
    for (let client = 1; client <= 12; client++) {
      const agent = new Agent({ localAddress: `127.0.0.${client + 1}` } as ConstructorParameters<typeof Agent>[0]);
      const answers = new Set<string>();
      for (let i = 0; i < 5; i++) answers.add((await trafficRequest(port, name, '/', { agent })).body);
      expect(answers.size).toBe(1);
      seen.add([...answers][0]!);
      agent.destroy();
    }
    expect(seen.size).toBeGreaterThan(1);
  });

  it('origin_steering least_outstanding_requests and least_connections: a busy origin is passed over', async () => {
    for (const policy of ['least_outstanding_requests', 'least_connections']) {
      const pool = await createPool(ledge, `busy-${policy}`, [origins['b1']!, origins['b2']!], {
        origin_steering: { policy },
      });
      const { name } = await balance({ default_pools: [pool], fallback_pool: pools['fallback'] });
      await trafficRequest(port, name);
      const slow = [0, 1].map(() => trafficRequest(port, name, '/slow/800', { agent: new Agent() }));
      const answers = await Promise.all(slow);
      expect(answers.map((answer) => answer.body).sort(), policy).toEqual(['b1', 'b2']);
    }
  });

  it('every pool unhealthy: the fallback pool; health changes steer at the next probe result', async () => {
    const down = await NamedOrigin.start('down');
    const monitor = await createMonitor(ledge);
    const watched = await createPool(ledge, 'watched', [down], { monitor });
    const { name } = await balance({ default_pools: [watched], fallback_pool: pools['fallback'] });
    expect((await trafficRequest(port, name)).body).toBe('down');
    await down.stop();
    await waitFor(
      async () => ((await trafficRequest(port, name)).body === 'fb' ? true : undefined),
      10_000,
      'fallback',
    );
    await down.start();
    await waitFor(
      async () => ((await trafficRequest(port, name)).body === 'down' ? true : undefined),
      10_000,
      'recovery',
    );
    await down.stop();
  });

  it('a disabled load balancer answers 503; an unimplemented steering policy answers 501 naming it', async () => {
    const { name, id } = await balance({ default_pools: [pools['a']], fallback_pool: pools['fallback'] });
    await patchLoadBalancer(ledge, zoneId, id, { enabled: false });
    const disabled = await waitFor(async () => {
      const answer = await trafficRequest(port, name);
      return answer.status === 503 ? answer : undefined;
    }, 30_000);
    expect(disabled.body).toContain('disabled');
    await patchLoadBalancer(ledge, zoneId, id, { enabled: true, steering_policy: 'geo' });
    const geo = await waitFor(async () => {
      const answer = await trafficRequest(port, name);
      return answer.status === 501 ? answer : undefined;
    }, 30_000);
    expect(geo.body).toContain('"geo" is not implemented');
  });

  it('no usable origin in any pool, fallback included: 503', async () => {
    const off = await createPool(ledge, 'all-off', [{ origin: origins['a1']!, enabled: false }]);
    const { name } = await balance({ default_pools: [off], fallback_pool: off });
    const answer = await trafficRequest(port, name);
    expect(answer.status).toBe(503);
    expect(answer.body).toMatch(/^error code: 503\n/);
  });
});
