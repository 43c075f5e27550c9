import type { HealthStore } from '../health/health-store.ts';
import { isProbed } from '../health/probe.ts';
import type { Monitor } from '../monitor-schemas.ts';
import type { MonitorStore } from '../monitor-store.ts';
import type { Pool } from '../pool-schemas.ts';
import type { PoolStore } from '../pool-store.ts';
import type { ConfigChangeBus, ConfigChangeListener } from './changes.ts';
import type { LoadBalancer } from './schemas.ts';
import type { LoadBalancerStore } from './store.ts';
import { hostnameOf } from '../../shared/hostname.ts';

/** A pool as the traffic listener needs it: its origins, enabled flags, origin_steering, and its monitor. */
export interface RoutePool {
  pool: Pool;
  monitor: Monitor | undefined;
}

/** Everything needed to route one hostname: the load balancer, its pools in failover order, its fallback pool. */
export interface LoadBalancerRoute {
  accountId: string;
  zoneId: string;
  loadBalancer: LoadBalancer;
  /** `default_pools`, in order; a pool that vanished meanwhile is left out. */
  pools: RoutePool[];
  fallbackPool: RoutePool | undefined;
}

/** Current health of one pool, as the health checker last recorded it. */
export interface PoolHealthState {
  /** False when nothing probes the pool (no monitor, an ICMP monitor, or the pool disabled): all counts as healthy. */
  monitored: boolean;
  healthy: boolean;
  /** Origin name -> healthy; an origin not probed yet is healthy. */
  origins: Map<string, boolean>;
}

/**
 * The read side of load balancing for the traffic listener: which load balancer serves a hostname, with
 * its pools; the pools' current health; and a change signal (`version`, `onChange`) so cached routes can
 * be dropped as soon as configuration changes. Health transitions come from HealthEventBus.
 */
export class LoadBalancerDirectory {
  readonly #loadBalancers: LoadBalancerStore;
  readonly #pools: PoolStore;
  readonly #monitors: MonitorStore;
  readonly #health: HealthStore;
  readonly #changes: ConfigChangeBus;
  /**
   * Routes by hostname (unknown hostnames too: a flood of made-up Host headers costs one lookup each), dropped
   * whole on every configuration change. Health is not part of a route, so probe results never invalidate it.
   */
  readonly #routes = new Map<string, Promise<LoadBalancerRoute | undefined>>();

  constructor(deps: {
    loadBalancers: LoadBalancerStore;
    pools: PoolStore;
    monitors: MonitorStore;
    health: HealthStore;
    changes: ConfigChangeBus;
  }) {
    this.#loadBalancers = deps.loadBalancers;
    this.#pools = deps.pools;
    this.#monitors = deps.monitors;
    this.#health = deps.health;
    this.#changes = deps.changes;
    this.#changes.subscribe(() => this.#routes.clear());
  }

  /** Grows with every load balancer, pool, monitor or zone change. */
  get version(): number {
    return this.#changes.version;
  }

  /** Called after every configuration change has committed; returns the unsubscribe function. */
  onChange(listener: ConfigChangeListener): () => void {
    return this.#changes.subscribe(listener);
  }

  /**
   * `host` as in a Host header: case and a port or trailing dot do not matter. Answers are cached until the next
   * configuration change, so the traffic listener may call this on every request (callers share the answer: read it,
   * never change it).
   */
  findByHostname(host: string): Promise<LoadBalancerRoute | undefined> {
    const name = hostnameOf(host);
    if (name === '' || name.length > 253) return Promise.resolve(undefined);
    let route = this.#routes.get(name);
    if (!route) {
      if (this.#routes.size >= MAX_CACHED_ROUTES) this.#routes.clear();
      route = this.#lookup(name);
      this.#routes.set(name, route);
      // A failed lookup (database error) is not remembered.
      route.catch(() => this.#routes.get(name) === route && this.#routes.delete(name));
    }
    return route;
  }

  async #lookup(name: string): Promise<LoadBalancerRoute | undefined> {
    const placed = await this.#loadBalancers.getByName(name);
    if (!placed) return undefined;
    const { accountId, zoneId, loadBalancer } = placed;
    const monitors = new Map<string, Monitor | undefined>();
    const routePool = async (poolId: string): Promise<RoutePool | undefined> => {
      const pool = await this.#pools.get(accountId, poolId);
      if (!pool) return undefined;
      let monitor: Monitor | undefined;
      if (pool.monitor) {
        if (!monitors.has(pool.monitor)) monitors.set(pool.monitor, await this.#monitors.get(accountId, pool.monitor));
        monitor = monitors.get(pool.monitor);
      }
      return { pool, monitor };
    };
    const pools: RoutePool[] = [];
    for (const id of loadBalancer.default_pools) {
      const pool = await routePool(id);
      if (pool) pools.push(pool);
    }
    return { accountId, zoneId, loadBalancer, pools, fallbackPool: await routePool(loadBalancer.fallback_pool) };
  }

  /** The pool's and its origins' health as last recorded (see PoolHealthState for unprobed pools). */
  async poolHealth(route: RoutePool): Promise<PoolHealthState> {
    const { pool, monitor } = route;
    const monitored = pool.enabled && monitor !== undefined && isProbed(monitor.type);
    if (!monitored) return { monitored, healthy: true, origins: new Map(pool.origins.map((o) => [o.name, true])) };
    const [states, poolState] = await Promise.all([
      this.#health.originStates(pool.id),
      this.#health.poolState(pool.id),
    ]);
    const origins = new Map(pool.origins.map((o) => [o.name, states.get(o.name)?.healthy ?? true]));
    return { monitored, healthy: poolState?.healthy ?? true, origins };
  }
}

const MAX_CACHED_ROUTES = 10_000;
