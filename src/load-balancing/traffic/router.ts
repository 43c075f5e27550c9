import {
  affinityCookie,
  affinityMode,
  cookiePin,
  headerSessionKey,
  type HeaderSessions,
  type Pin,
} from './affinity.ts';
import {
  passiveFailures,
  TrafficErrors,
  type EndpointRegistry,
  type RequestView,
  type RouteResult,
} from '../../proxy/index.ts';
import type { HealthSource, PoolHealthSnapshot } from './health-source.ts';
import type { ResolvedLoadBalancer } from './directory.ts';
import { Route } from './lb-route.ts';
import type { Pool } from '../pool-schemas.ts';
import type { RouteCache, RouteCacheEntry } from './route-cache.ts';
import { makePlan, planHolds, plannedRoute } from './steering-plan.ts';
import { chooseTarget, pinnedTarget, unimplementedSteering, type SteeringContext } from './steering.ts';
import type { Random } from './weighted-pick.ts';
import type { Clock } from '../../shared/clock.ts';

export interface RouterDeps {
  routes: RouteCache;
  health: HealthSource;
  endpoints: EndpointRegistry;
  sessions: HeaderSessions;
  random: Random;
  /** The data plane's time (the listener's clock, which the caches and endpoints read too). */
  clock: Clock;
}

/**
 * Host -> load balancer -> pool -> origin for one request: the steering policy over the health
 * checker's verdicts, with session affinity keeping a client on its origin while that origin serves.
 * Answers synchronously when the route and health caches are warm (the hot path: no Promise per
 * request), and with a Promise when one of them has to be read.
 */
export function routeRequest(deps: RouterDeps, req: RequestView, https: boolean): RouteResult | Promise<RouteResult> {
  const host = req.hostname;
  // One reading of the clock for the route cache, the health snapshots and passive health.
  const now = deps.clock.now();
  const cached = deps.routes.peek(host, now);
  if (cached) {
    // The hot path: the steering worked out for this load balancer still holds.
    const plan = cached.plan;
    if (plan !== undefined && plan.routes.length > 0 && planHolds(plan, now, deps.health.version, passiveFailures())) {
      return plannedRoute(plan, deps.random);
    }
    return routeResolved(deps, req, https, host, cached.value, now, cached);
  }
  return deps.routes.resolve(host).then((resolved) => routeResolved(deps, req, https, host, resolved));
}

function routeResolved(
  deps: RouterDeps,
  req: RequestView,
  https: boolean,
  host: string,
  resolved: ResolvedLoadBalancer | undefined,
  now = deps.clock.now(),
  entry?: RouteCacheEntry,
): RouteResult | Promise<RouteResult> {
  if (!resolved) return TrafficErrors.unknownHost(host);
  const lb = resolved.loadBalancer;
  if (!lb.enabled) return TrafficErrors.disabled(host);
  const unimplemented = unimplementedSteering(lb.steering_policy);
  if (unimplemented !== undefined) return TrafficErrors.steeringNotImplemented(unimplemented);
  const snapshots = deps.health.snapshots(poolsWithFallback(resolved), now);
  if (snapshots instanceof Promise) {
    return snapshots.then((health) => steer(deps, req, https, resolved, health, deps.clock.now()));
  }
  return steer(deps, req, https, resolved, snapshots, now, entry);
}

/** A resolved load balancer's pools and fallback pool: one array per resolved entry (read per request). */
const allPools = new WeakMap<ResolvedLoadBalancer, readonly Pool[]>();
function poolsWithFallback(resolved: ResolvedLoadBalancer): readonly Pool[] {
  if (!resolved.fallback) return resolved.pools;
  let pools = allPools.get(resolved);
  if (!pools) allPools.set(resolved, (pools = [...resolved.pools, resolved.fallback]));
  return pools;
}

function steer(
  deps: RouterDeps,
  req: RequestView,
  https: boolean,
  resolved: ResolvedLoadBalancer,
  health: ReadonlyMap<string, PoolHealthSnapshot>,
  now: number,
  entry?: RouteCacheEntry,
): RouteResult {
  const lb = resolved.loadBalancer;
  const ctx: SteeringContext & { now: number } = {
    resolved,
    health,
    clientAddress: req.clientAddress,
    endpoints: deps.endpoints,
    random: deps.random,
    avoidFailing: true,
    now,
  };

  const mode = affinityMode(lb);
  if (mode === 'none') {
    if (entry) {
      // Worked out once (the routes it keeps know no client), then reused while it holds.
      const failures = passiveFailures();
      const version = deps.health.version;
      const plan = entry.plan;
      if (plan === undefined || !planHolds(plan, now, version, failures)) {
        const shared = { ...ctx, clientAddress: '' };
        entry.plan = makePlan(shared, deps.sessions, { version, freshUntil: deps.health.freshUntil(health) }, failures);
      }
      if (entry.plan!.routes.length > 0) return plannedRoute(entry.plan!, deps.random);
    }
    const target = chooseTarget(ctx);
    return target ? new Route(ctx, target, deps.sessions) : TrafficErrors.noHealthyPool();
  }
  if (mode === 'header') {
    const key = headerSessionKey(lb, (name) => req.header(name));
    const pin = key ? deps.sessions.get(key) : undefined;
    const pinned = pin && pinnedTarget(ctx, pin.poolId, pin.originName);
    if (pinned) return new Route(ctx, pinned, deps.sessions);
    const target = chooseTarget(ctx);
    if (!target) return TrafficErrors.noHealthyPool();
    return new Route(ctx, target, deps.sessions, undefined, key);
  }
  // cookie and ip_cookie: the __cflb cookie pins; ip_cookie's first pick hashes the client address.
  const pin: Pin | undefined = cookiePin(req.header('cookie'));
  const pinned = pin && pinnedTarget(ctx, pin.poolId, pin.originName);
  if (pinned) return new Route(ctx, pinned, deps.sessions);
  const target = chooseTarget(ctx, undefined, mode === 'ip_cookie');
  if (!target) return TrafficErrors.noHealthyPool();
  return new Route(ctx, target, deps.sessions, affinityCookie(lb, target, https));
}
