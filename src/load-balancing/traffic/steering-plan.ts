import { isFailing, PASSIVE_FAILURE_MS } from '../../proxy/index.ts';
import type { HeaderSessions } from './affinity.ts';
import { Route } from './lb-route.ts';
import { poolIsServing, targetOf, usableOrigins, type SteeringContext } from './steering.ts';
import type { Random } from './weighted-pick.ts';

/**
 * A load balancer's steering worked out once and reused by every request while what it was worked out from
 * stays the same: the resolved load balancer (the route cache entry it is kept on), the health snapshots
 * (`healthVersion`, and until they are due to be read again), and the origins' passive health (no connection
 * failure since, and none of the origins still passed over when it was made). Then a request costs a few
 * comparisons and, with several origins, one weighted draw: no context, route or target is made per request.
 *
 * It holds a route per usable origin of the pool the policy picks, when that choice does not depend on the
 * request or on live counters: no session affinity, failover order (`off`) or a single serving pool, and
 * random origin steering (or a single origin). Otherwise `routes` is empty and requests take the full
 * steering, which the plan then only saves from being worked out again.
 */
export interface SteeringPlan {
  readonly healthVersion: number;
  readonly failures: number;
  /** Time (the data plane's clock) from which the plan is stale whatever else holds. */
  readonly validUntil: number;
  /** One per usable origin of the chosen pool; empty: steer each request in full. */
  readonly routes: readonly Route[];
  /** Running sums of the origins' weights, in `routes` order. */
  readonly cumulativeWeights: readonly number[];
}

/** Whether `plan` still holds at `now`, for this health version and failure count. */
export function planHolds(plan: SteeringPlan, now: number, healthVersion: number, failures: number): boolean {
  return now < plan.validUntil && plan.healthVersion === healthVersion && plan.failures === failures;
}

/** The route of one request by the plan (which has routes), by the same weighted draw as pickWeighted. */
export function plannedRoute(plan: SteeringPlan, random: Random): Route {
  const routes = plan.routes;
  if (routes.length === 1) return routes[0]!;
  const weights = plan.cumulativeWeights;
  const point = random() * weights[weights.length - 1]!;
  for (let index = 0; index < routes.length; index++) if (point < weights[index]!) return routes[index]!;
  return routes[routes.length - 1]!;
}

/**
 * The plan for a load balancer without session affinity, from a steering context made at `ctx.now` (which
 * avoids failing origins). `freshUntil` is when the health snapshots in `ctx.health` are due to be read again.
 */
export function makePlan(
  ctx: SteeringContext & { now: number },
  sessions: HeaderSessions,
  health: { version: number; freshUntil: number },
  failures: number,
): SteeringPlan {
  const { resolved, now } = ctx;
  const pools = resolved.fallback ? [...resolved.pools, resolved.fallback] : resolved.pools;
  let validUntil = health.freshUntil;
  // An origin passed over now takes traffic again when its passive failure ends: the plan ends then too.
  let hashed = false;
  for (const pool of pools) {
    if (pool.origin_steering?.policy === 'hash') hashed = true;
    for (const origin of pool.origins) {
      const endpoint = ctx.endpoints.for(origin);
      if (isFailing(endpoint, now)) validUntil = Math.min(validUntil, endpoint.failedAt + PASSIVE_FAILURE_MS);
    }
  }
  const unplanned: SteeringPlan = {
    healthVersion: health.version,
    failures,
    validUntil,
    routes: [],
    cumulativeWeights: [],
  };
  // (A retry on a hash-steered pool hashes the client's address, which a shared route does not hold.)
  if (hashed) return unplanned;
  let chosen;
  let serving = 0;
  for (const pool of resolved.pools) {
    if (!poolIsServing(ctx, pool, ctx.health.get(pool.id))) continue;
    serving++;
    chosen ??= pool;
  }
  const policy = resolved.loadBalancer.steering_policy;
  const failoverOrder = policy === undefined || policy === '' || policy === 'off';
  if (!chosen || (serving > 1 && !failoverOrder)) return unplanned;
  const origins = usableOrigins(ctx, chosen, ctx.health.get(chosen.id));
  const originPolicy = chosen.origin_steering?.policy ?? 'random';
  if (origins.length > 1 && originPolicy !== 'random') return unplanned;
  const routes: Route[] = [];
  const cumulativeWeights: number[] = [];
  let total = 0;
  for (const origin of origins) {
    total += origin.weight;
    routes.push(new Route(ctx, targetOf(ctx.endpoints, chosen, origin), sessions));
    cumulativeWeights.push(total);
  }
  return { ...unplanned, routes, cumulativeWeights };
}
