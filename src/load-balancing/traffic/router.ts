import {
  affinityCookie,
  affinityMode,
  cookiePin,
  headerSessionKey,
  type HeaderSessions,
  type Pin,
} from './affinity.ts';
import {
  TrafficErrors,
  type EndpointRegistry,
  type ProxyRoute,
  type RequestView,
  type RouteResult,
} from '../../proxy/index.ts';
import type { HealthSource, PoolHealthSnapshot } from './health-source.ts';
import type { ResolvedLoadBalancer } from './directory.ts';
import type { Pool } from '../pool-schemas.ts';
import type { RouteCache } from './route-cache.ts';
import { chooseTarget, pinnedTarget, unimplementedSteering, type SteeringContext, type Target } from './steering.ts';
import type { Random } from './weighted-pick.ts';
import type { Clock } from '../../shared/clock.ts';

/** Where a request goes, and what the session affinity needs written back: the proxy engine's route. */
export class Route implements ProxyRoute<Target> {
  readonly ctx: SteeringContext;
  readonly target: Target;
  /** Set-Cookie for a new cookie session. */
  readonly setCookie: string | undefined;
  /** Header-affinity key to record once the origin answered. */
  readonly headerKey: string | undefined;
  readonly #sessions: HeaderSessions;

  constructor(ctx: SteeringContext, target: Target, sessions: HeaderSessions, setCookie?: string, headerKey?: string) {
    this.ctx = ctx;
    this.target = target;
    this.#sessions = sessions;
    this.setCookie = setCookie;
    this.headerKey = headerKey;
  }

  /** The origin's `header.Host`, when set, replaces the client's. */
  hostFor(target: Target): string | undefined {
    return target.origin.header?.Host[0];
  }

  /** Another origin after a connection failure, by the same steering (the failed one avoided). */
  retryTarget(failed: Target): Target | undefined {
    // (At the time of the retry, not of the request: passive health may have changed since.)
    return chooseTarget({ ...this.ctx, now: undefined }, failed);
  }

  /** A cookie session whose first origin failed is pinned to the one that answered. */
  retryCookie(target: Target): string | undefined {
    const lb = this.ctx.resolved.loadBalancer;
    const mode = affinityMode(lb);
    return mode === 'cookie' || mode === 'ip_cookie' ? affinityCookie(lb, target, false) : undefined;
  }

  answered(target: Target): void {
    if (this.headerKey) this.#sessions.set(this.ctx.resolved.loadBalancer, this.headerKey, target);
  }
}

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
  if (cached) return routeResolved(deps, req, https, host, cached.value, now);
  return deps.routes.resolve(host).then((resolved) => routeResolved(deps, req, https, host, resolved));
}

function routeResolved(
  deps: RouterDeps,
  req: RequestView,
  https: boolean,
  host: string,
  resolved: ResolvedLoadBalancer | undefined,
  now = deps.clock.now(),
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
  return steer(deps, req, https, resolved, snapshots, now);
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
): RouteResult {
  const lb = resolved.loadBalancer;
  const ctx: SteeringContext = {
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
