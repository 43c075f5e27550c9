import type { IncomingMessage } from 'node:http';
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
import { clientAddress, hostnameOf } from './forwarded-headers.ts';
import type { HealthSource, PoolHealthSnapshot } from './health-source.ts';
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

/**
 * Host -> load balancer -> pool -> origin for one request: the steering policy over the health
 * checker's verdicts, with session affinity keeping a client on its origin while that origin serves.
 */
export async function routeRequest(
  deps: RouterDeps,
  req: IncomingMessage,
  https: boolean,
): Promise<Route | ErrorAnswer> {
  const host = hostnameOf(req.headers.host);
  const resolved = deps.routes.peek(host)?.value ?? (await deps.routes.resolve(host));
  if (!resolved) return TrafficErrors.unknownHost(host);
  const lb = resolved.loadBalancer;
  if (!lb.enabled) return TrafficErrors.disabled(host);
  const unimplemented = unimplementedSteering(lb.steering_policy);
  if (unimplemented !== undefined) return TrafficErrors.steeringNotImplemented(unimplemented);
  const pools = resolved.fallback ? [...resolved.pools, resolved.fallback] : resolved.pools;
  const snapshots = deps.health.snapshots(pools);
  const health: ReadonlyMap<string, PoolHealthSnapshot> = snapshots instanceof Map ? snapshots : await snapshots;
  const ctx: SteeringContext = {
    resolved,
    health,
    clientAddress: clientAddress(req),
    endpoints: deps.endpoints,
    random: deps.random,
  };

  const mode = affinityMode(lb);
  if (mode === 'none') {
    const target = chooseTarget(ctx);
    return target ? { ctx, target } : TrafficErrors.noHealthyPool();
  }
  if (mode === 'header') {
    const key = headerSessionKey(lb, req.headers);
    const pin = key ? deps.sessions.get(key) : undefined;
    const pinned = pin && pinnedTarget(ctx, pin.poolId, pin.originName);
    if (pinned) return { ctx, target: pinned };
    const target = chooseTarget(ctx);
    if (!target) return TrafficErrors.noHealthyPool();
    return key ? { ctx, target, headerKey: key } : { ctx, target };
  }
  // cookie and ip_cookie: the __cflb cookie pins; ip_cookie's first pick hashes the client address.
  const pin: Pin | undefined = cookiePin(req.headers);
  const pinned = pin && pinnedTarget(ctx, pin.poolId, pin.originName);
  if (pinned) return { ctx, target: pinned };
  const target = chooseTarget(ctx, undefined, mode === 'ip_cookie');
  if (!target) return TrafficErrors.noHealthyPool();
  return { ctx, target, setCookie: affinityCookie(lb, target, https) };
}

export function isErrorAnswer(value: Route | ErrorAnswer): value is ErrorAnswer {
  return (value as ErrorAnswer).status !== undefined;
}
