import {
  affinityCookie,
  affinityMode,
  cookiePin,
  headerSessionKey,
  type HeaderSessions,
  type Pin,
} from './affinity.ts';
import type { EndpointRegistry } from './endpoints.ts';
import { TrafficErrors, type ErrorAnswer } from './error-answers.ts';
import { hostnameOf } from './forwarded-headers.ts';
import type { HealthSource, PoolHealthSnapshot } from './health-source.ts';
import type { ResolvedLoadBalancer } from './directory.ts';
import type { RouteCache } from './route-cache.ts';
import { chooseTarget, pinnedTarget, unimplementedSteering, type SteeringContext, type Target } from './steering.ts';
import type { Random } from './weighted-pick.ts';

/** Where a request goes, and what the session affinity needs written back. */
export interface Route {
  ctx: SteeringContext;
  target: Target;
  /** Set-Cookie for a new cookie session. */
  setCookie?: string;
  /** Header-affinity key to record once the origin answered. */
  headerKey?: string;
}

export interface RouterDeps {
  routes: RouteCache;
  health: HealthSource;
  endpoints: EndpointRegistry;
  sessions: HeaderSessions;
  random: Random;
}

/** What routing reads of a request, from node:http's IncomingMessage or the raw data plane's parsed head. */
export interface RequestView {
  host: string | undefined;
  clientAddress: string;
  /** A header's value by lowercase name (repeated ones joined), for session affinity. */
  header(lowercaseName: string): string | undefined;
}

export type RouteResult = Route | ErrorAnswer;

/**
 * Host -> load balancer -> pool -> origin for one request: the steering policy over the health
 * checker's verdicts, with session affinity keeping a client on its origin while that origin serves.
 * Answers synchronously when the route and health caches are warm (the hot path: no Promise per
 * request), and with a Promise when one of them has to be read.
 */
export function routeRequest(deps: RouterDeps, req: RequestView, https: boolean): RouteResult | Promise<RouteResult> {
  const host = hostnameOf(req.host);
  const cached = deps.routes.peek(host);
  if (cached) return routeResolved(deps, req, https, host, cached.value);
  return deps.routes.resolve(host).then((resolved) => routeResolved(deps, req, https, host, resolved));
}

function routeResolved(
  deps: RouterDeps,
  req: RequestView,
  https: boolean,
  host: string,
  resolved: ResolvedLoadBalancer | undefined,
): RouteResult | Promise<RouteResult> {
  if (!resolved) return TrafficErrors.unknownHost(host);
  const lb = resolved.loadBalancer;
  if (!lb.enabled) return TrafficErrors.disabled(host);
  const unimplemented = unimplementedSteering(lb.steering_policy);
  if (unimplemented !== undefined) return TrafficErrors.steeringNotImplemented(unimplemented);
  const pools = resolved.fallback ? [...resolved.pools, resolved.fallback] : resolved.pools;
  const snapshots = deps.health.snapshots(pools);
  if (snapshots instanceof Map) return steer(deps, req, https, resolved, snapshots);
  return snapshots.then((health) => steer(deps, req, https, resolved, health));
}

function steer(
  deps: RouterDeps,
  req: RequestView,
  https: boolean,
  resolved: ResolvedLoadBalancer,
  health: ReadonlyMap<string, PoolHealthSnapshot>,
): RouteResult {
  const lb = resolved.loadBalancer;
  const ctx: SteeringContext = {
    resolved,
    health,
    clientAddress: req.clientAddress,
    endpoints: deps.endpoints,
    random: deps.random,
  };

  const mode = affinityMode(lb);
  if (mode === 'none') {
    const target = chooseTarget(ctx);
    return target ? { ctx, target } : TrafficErrors.noHealthyPool();
  }
  if (mode === 'header') {
    const key = headerSessionKey(lb, (name) => req.header(name));
    const pin = key ? deps.sessions.get(key) : undefined;
    const pinned = pin && pinnedTarget(ctx, pin.poolId, pin.originName);
    if (pinned) return { ctx, target: pinned };
    const target = chooseTarget(ctx);
    if (!target) return TrafficErrors.noHealthyPool();
    return key ? { ctx, target, headerKey: key } : { ctx, target };
  }
  // cookie and ip_cookie: the __cflb cookie pins; ip_cookie's first pick hashes the client address.
  const pin: Pin | undefined = cookiePin(req.header('cookie'));
  const pinned = pin && pinnedTarget(ctx, pin.poolId, pin.originName);
  if (pinned) return { ctx, target: pinned };
  const target = chooseTarget(ctx, undefined, mode === 'ip_cookie');
  if (!target) return TrafficErrors.noHealthyPool();
  return { ctx, target, setCookie: affinityCookie(lb, target, https) };
}

export function isErrorAnswer(value: RouteResult): value is ErrorAnswer {
  return (value as ErrorAnswer).status !== undefined;
}

/**
 * Calls `then` with the route, at once when routing answered synchronously; `fail` gets a routing error
 * (a thrown one or a rejected lookup) either way.
 */
export function whenRouted(
  route: () => RouteResult | Promise<RouteResult>,
  then: (result: RouteResult) => void,
  fail: (error: unknown) => void,
): void {
  let result: RouteResult | Promise<RouteResult>;
  try {
    result = route();
  } catch (error) {
    return fail(error);
  }
  if (result instanceof Promise) result.then(then, fail);
  else then(result);
}
