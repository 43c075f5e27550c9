import { APPLIED_STEERING_POLICIES } from '../load-balancers/schemas.ts';
import type { Origin, Pool } from '../pool-schemas.ts';
import type { ResolvedLoadBalancer } from './directory.ts';
import { isFailing, type Endpoint, type EndpointRegistry } from '../../proxy/index.ts';
import type { PoolHealthSnapshot } from './health-source.ts';
import { pickByHash, pickLeastLoaded, pickWeighted, type Random } from './weighted-pick.ts';

/** Steering policies the data plane implements (the API's list); others are stored and answered 501 here. */
const IMPLEMENTED_STEERING: ReadonlySet<string> = new Set(APPLIED_STEERING_POLICIES);

export function unimplementedSteering(policy: string | undefined): string | undefined {
  return IMPLEMENTED_STEERING.has(policy ?? '') ? undefined : policy;
}

/** Where one attempt goes. */
export interface Target {
  readonly pool: Pool;
  readonly origin: Origin;
  readonly endpoint: Endpoint;
}

export interface SteeringContext {
  resolved: ResolvedLoadBalancer;
  health: ReadonlyMap<string, PoolHealthSnapshot>;
  clientAddress: string;
  endpoints: EndpointRegistry;
  random: Random;
  /** Skip origins whose connection failed in the last seconds (passive health); cleared for a last try. */
  avoidFailing?: boolean;
  now?: number;
}

/**
 * Origins of a pool that may take traffic: enabled, weight above 0, and (unless health is ignored) not
 * unhealthy by the monitor nor, with `ctx.avoidFailing`, failing passively. The array may be shared
 * between requests: callers do not change it.
 */
export function usableOrigins(
  ctx: SteeringContext,
  pool: Pool,
  snapshot: PoolHealthSnapshot | undefined,
  ignoreHealth = false,
): readonly Origin[] {
  const origins = originsTakingTraffic(pool, snapshot, ignoreHealth);
  if (ignoreHealth || !ctx.avoidFailing) return origins;
  const now = ctx.now ?? ctx.endpoints.clock.now();
  // (A loop first: on the hot path no origin is failing, and no array is made.)
  for (const origin of origins) {
    if (isFailing(ctx.endpoints.for(origin), now)) {
      return origins.filter((candidate) => !isFailing(ctx.endpoints.for(candidate), now));
    }
  }
  return origins;
}

interface TakingTraffic {
  snapshot: PoolHealthSnapshot | undefined;
  healthy: readonly Origin[];
  enabled: readonly Origin[];
}
/**
 * Per pool object (shared and never changed: a configuration change makes new ones, see
 * load-balancers/directory.ts) and health snapshot: the origins enabled with a weight, and those of them the
 * monitor does not hold unhealthy. Computed once per snapshot rather than filtered twice per request.
 */
const takingTraffic = new WeakMap<Pool, TakingTraffic>();

function originsTakingTraffic(
  pool: Pool,
  snapshot: PoolHealthSnapshot | undefined,
  ignoreHealth: boolean,
): readonly Origin[] {
  let entry = takingTraffic.get(pool);
  if (!entry || entry.snapshot !== snapshot) {
    const enabled = pool.origins.filter((origin) => origin.enabled && origin.weight > 0);
    const healthy = snapshot ? enabled.filter((origin) => !snapshot.unhealthyOrigins.has(origin.name)) : enabled;
    entry = { snapshot, healthy, enabled };
    takingTraffic.set(pool, entry);
  }
  return ignoreHealth ? entry.enabled : entry.healthy;
}

/** A pool takes traffic when enabled, healthy by its monitor, and with at least one usable origin. */
export function poolIsServing(ctx: SteeringContext, pool: Pool, snapshot: PoolHealthSnapshot | undefined): boolean {
  return pool.enabled && (snapshot?.poolHealthy ?? true) && usableOrigins(ctx, pool, snapshot).length > 0;
}

/**
 * Picks the target of a request: the first pool by the load balancer's steering policy among the serving
 * ones, then an origin of it by the pool's origin_steering; with no serving pool, the fallback pool (whose
 * healthy origins are preferred, but which takes traffic even when all are down, as on Cloudflare).
 * `avoid` is a failed attempt: another origin of its pool is tried first, other pools only with
 * adaptive_routing.failover_across_pools. `hashAll` forces hash steering (ip_cookie's first pick).
 */
export function chooseTarget(ctx: SteeringContext, avoid?: Target, hashAll = false): Target | undefined {
  // Origins that just refused a connection are passed over while any other can take the request. (A context
  // that already avoids them at a given time, as the router makes one per request, is used as it is.)
  const now = ctx.now ?? ctx.endpoints.clock.now();
  const avoiding = ctx.avoidFailing === true && ctx.now !== undefined ? ctx : { ...ctx, avoidFailing: true, now };
  return chooseAmong(avoiding, avoid, hashAll) ?? chooseAmong({ ...ctx, avoidFailing: false, now }, avoid, hashAll);
}

function chooseAmong(ctx: SteeringContext, avoid: Target | undefined, hashAll: boolean): Target | undefined {
  const { resolved } = ctx;
  if (avoid) {
    const same = chooseOrigin(ctx, avoid.pool, avoid.endpoint, hashAll);
    if (same || !resolved.loadBalancer.adaptive_routing?.failover_across_pools) return same;
  }
  const serving: Pool[] = [];
  for (const pool of resolved.pools) {
    if (pool.id !== avoid?.pool.id && poolIsServing(ctx, pool, ctx.health.get(pool.id))) serving.push(pool);
  }
  for (const pool of orderPools(ctx, serving)) {
    const target = chooseOrigin(ctx, pool, avoid?.endpoint, hashAll);
    if (target) return target;
  }
  const fallback = resolved.fallback;
  if (!fallback || fallback.id === avoid?.pool.id) return undefined;
  return (
    chooseOrigin(ctx, fallback, avoid?.endpoint, hashAll) ?? chooseOrigin(ctx, fallback, avoid?.endpoint, hashAll, true)
  );
}

/** The serving pools, the steering policy's choice first and the others in failover order. */
function orderPools(ctx: SteeringContext, serving: Pool[]): Pool[] {
  if (serving.length <= 1) return serving;
  const lb = ctx.resolved.loadBalancer;
  const weights = lb.random_steering;
  const weight = (pool: Pool) => weights?.pool_weights?.[pool.id] ?? weights?.default_weight ?? 1;
  let first: Pool | undefined;
  switch (lb.steering_policy) {
    case 'random':
      first = pickWeighted(serving, weight, ctx.random);
      break;
    case 'least_outstanding_requests':
      first = pickLeastLoaded(serving, (pool) => poolLoad(ctx, pool, 'outstanding'), weight, ctx.random);
      break;
    case 'least_connections':
      first = pickLeastLoaded(serving, (pool) => poolLoad(ctx, pool, 'connections'), weight, ctx.random);
      break;
    default:
      return serving; // off / "": failover order
  }
  return first ? [first, ...serving.filter((pool) => pool !== first)] : serving;
}

function poolLoad(ctx: SteeringContext, pool: Pool, counter: 'outstanding' | 'connections'): number {
  let load = 0;
  for (const origin of usableOrigins(ctx, pool, ctx.health.get(pool.id))) load += ctx.endpoints.for(origin)[counter];
  return load;
}

/** An origin of the pool by its origin_steering policy (random by weight when unset). */
export function chooseOrigin(
  ctx: SteeringContext,
  pool: Pool,
  avoid: Endpoint | undefined,
  hashAll = false,
  ignoreHealth = false,
): Target | undefined {
  let origins = usableOrigins(ctx, pool, ctx.health.get(pool.id), ignoreHealth);
  if (avoid) origins = origins.filter((origin) => ctx.endpoints.for(origin) !== avoid);
  let origin: Origin | undefined;
  const policy = hashAll ? 'hash' : (pool.origin_steering?.policy ?? 'random');
  if (origins.length === 1) origin = origins[0];
  else if (policy === 'hash') origin = pickByHash(origins, ctx.clientAddress, (o) => o.name, originWeight);
  else if (policy === 'least_outstanding_requests')
    origin = pickLeastLoaded(origins, (o) => ctx.endpoints.for(o).outstanding, originWeight, ctx.random);
  else if (policy === 'least_connections')
    origin = pickLeastLoaded(origins, (o) => ctx.endpoints.for(o).connections, originWeight, ctx.random);
  else origin = pickWeighted(origins, originWeight, ctx.random);
  return origin ? targetOf(ctx.endpoints, pool, origin) : undefined;
}

function originWeight(origin: Origin): number {
  return origin.weight;
}

/**
 * Targets are never changed once made: one per origin object (of one pool object, see `takingTraffic`) and
 * endpoint is kept, rather than a new one per request.
 */
const targets = new WeakMap<Origin, Target>();

export function targetOf(endpoints: EndpointRegistry, pool: Pool, origin: Origin): Target {
  const endpoint = endpoints.for(origin);
  const known = targets.get(origin);
  if (known && known.pool === pool && known.endpoint === endpoint) return known;
  const target: Target = { pool, origin, endpoint };
  targets.set(origin, target);
  return target;
}

/**
 * A pinned origin (session affinity) if it still takes traffic: its pool is one of this load balancer's,
 * serving (or the fallback in use), and the origin itself is usable (not even failing passively).
 */
export function pinnedTarget(steering: SteeringContext, poolId: string, originName: string): Target | undefined {
  // (The router's per-request context already avoids failing origins.)
  const ctx = steering.avoidFailing === true ? steering : { ...steering, avoidFailing: true };
  const { resolved } = ctx;
  const pool =
    resolved.pools.find((candidate) => candidate.id === poolId) ??
    (resolved.fallback?.id === poolId ? resolved.fallback : undefined);
  if (!pool) return undefined;
  const snapshot = ctx.health.get(pool.id);
  const isFallbackOnly = pool === resolved.fallback && !resolved.pools.includes(pool);
  if (!isFallbackOnly && !poolIsServing(ctx, pool, snapshot)) return undefined;
  if (isFallbackOnly && resolved.pools.some((p) => poolIsServing(ctx, p, ctx.health.get(p.id)))) return undefined;
  const origin = usableOrigins(ctx, pool, snapshot).find((candidate) => candidate.name === originName);
  return origin ? targetOf(ctx.endpoints, pool, origin) : undefined;
}
