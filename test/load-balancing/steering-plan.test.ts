import { describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../src/egress/index.ts';
import type { Origin, Pool } from '../../src/load-balancing/pool-schemas.ts';
import { HeaderSessions } from '../../src/load-balancing/traffic/affinity.ts';
import type { ResolvedLoadBalancer, TrafficLoadBalancer } from '../../src/load-balancing/traffic/directory.ts';
import type { PoolHealthSnapshot } from '../../src/load-balancing/traffic/health-source.ts';
import { makePlan, planHolds, plannedRoute } from '../../src/load-balancing/traffic/steering-plan.ts';
import { chooseTarget, type SteeringContext } from '../../src/load-balancing/traffic/steering.ts';
import { EndpointRegistry, PASSIVE_FAILURE_MS, passiveFailures } from '../../src/proxy/index.ts';
import { ManualClock } from '../helpers/manual-clock.ts';

/**
 * The steering a load balancer works out once and reuses per request (src/load-balancing/traffic/
 * steering-plan.ts): it must pick what the full steering picks, hold only while its inputs hold, and leave to
 * the full steering what depends on the request or on live counters. (The traffic tests check the same end
 * to end: failover, health changes and passive health all go through it.)
 */
let origins = 0;
const origin = (weight = 1, extra: Partial<Origin> = {}): Origin => ({
  name: `o${++origins}`,
  address: '127.0.0.1',
  port: 10_000 + origins,
  enabled: true,
  weight,
  ...extra,
});
const pool = (id: string, members: Origin[], extra: Partial<Pool> = {}): Pool =>
  ({ id, name: id, enabled: true, minimum_origins: 1, origins: members, ...extra }) as Pool;
const healthy = (at: number, unhealthy: string[] = [], poolHealthy = true): PoolHealthSnapshot => ({
  poolHealthy,
  unhealthyOrigins: new Set(unhealthy),
  at,
});

function setting(pools: Pool[], lb: Partial<TrafficLoadBalancer> = {}, fallback?: Pool) {
  const clock = new ManualClock();
  const endpoints = new EndpointRegistry(60_000, new EgressPolicy({}, clock), clock);
  const resolved: ResolvedLoadBalancer = {
    accountId: 'a',
    loadBalancer: { id: 'lb', name: 'lb.test', enabled: true, default_pools: [], fallback_pool: '', ...lb },
    pools,
    fallback,
  };
  const now = clock.now();
  const health = new Map([...pools, ...(fallback ? [fallback] : [])].map((p) => [p.id, healthy(now)]));
  const ctx = (random: () => number = Math.random): SteeringContext & { now: number } => ({
    resolved,
    health,
    clientAddress: '',
    endpoints,
    random,
    avoidFailing: true,
    now: clock.now(),
  });
  const plan = (version = 1, freshUntil = now + 10_000) =>
    makePlan(ctx(), new HeaderSessions(clock), { version, freshUntil }, passiveFailures());
  return { clock, endpoints, resolved, health, ctx, plan };
}

describe('steering plan', () => {
  it('keeps one route per usable origin of the first serving pool and draws by weight as the full steering does', () => {
    const [light, heavy, off] = [origin(1), origin(3), origin(2, { enabled: false })];
    const { plan, ctx } = setting([pool('a', [light!, heavy!, off!]), pool('b', [origin()])]);
    const made = plan();
    expect(made.routes.map((route) => route.target.origin)).toEqual([light, heavy]);
    expect(made.cumulativeWeights).toEqual([1, 4]);
    for (const point of [0, 0.2, 0.249, 0.25, 0.6, 0.999]) {
      const random = () => point;
      expect(plannedRoute(made, random).target.origin).toBe(chooseTarget(ctx(random))!.origin);
    }
    // The same route object every time: nothing is made per request.
    expect(plannedRoute(made, () => 0.9)).toBe(plannedRoute(made, () => 0.9));
  });

  it('a single serving pool is planned whatever the steering policy; several under random are not', () => {
    const first = pool('a', [origin()]);
    const second = pool('b', [origin()]);
    const both = setting([first, second], { steering_policy: 'random' });
    expect(both.plan().routes).toEqual([]);
    both.health.set('b', healthy(both.clock.now(), [], false));
    expect(both.plan().routes.map((route) => route.target.pool)).toEqual([first]);
  });

  it('leaves to the full steering: hash anywhere, least-loaded origins, no serving pool', () => {
    const hashed = setting([
      pool('a', [origin()]),
      pool('b', [origin(), origin()], { origin_steering: { policy: 'hash' } }),
    ]);
    expect(hashed.plan().routes).toEqual([]);
    const loaded = setting([pool('a', [origin(), origin()], { origin_steering: { policy: 'least_connections' } })]);
    expect(loaded.plan().routes).toEqual([]);
    // A least-loaded pool with one usable origin has nothing to choose.
    const single = setting([pool('a', [origin()], { origin_steering: { policy: 'least_connections' } })]);
    expect(single.plan().routes).toHaveLength(1);
    const down = setting([pool('a', [origin()])], {}, pool('fb', [origin()]));
    down.health.set('a', healthy(down.clock.now(), [], false));
    expect(down.plan().routes).toEqual([]);
  });

  it('holds while health, passive failures and time hold; an origin passed over returns when its failure ends', async () => {
    const [first, second] = [origin(), origin()];
    const { plan, endpoints, clock } = setting([pool('a', [first!, second!])]);
    const made = plan(7);
    const start = clock.now();
    expect(made.validUntil).toBe(start + 10_000);
    expect(planHolds(made, start, 7, passiveFailures())).toBe(true);
    expect(planHolds(made, start, 8, passiveFailures())).toBe(false);
    expect(planHolds(made, start + 10_000, 7, passiveFailures())).toBe(false);
    endpoints.for(first!).markFailed();
    expect(planHolds(made, start, 7, passiveFailures())).toBe(false);
    const avoiding = plan(7);
    expect(avoiding.routes.map((route) => route.target.origin)).toEqual([second]);
    expect(avoiding.validUntil).toBe(start + PASSIVE_FAILURE_MS);
    await clock.advance(PASSIVE_FAILURE_MS);
    expect(plan(7).routes.map((route) => route.target.origin)).toEqual([first, second]);
  });
});
