import type { HealthStore } from '../health/health-store.ts';
import { isProbed } from '../health/probe.ts';
import type { Monitor } from '../monitor-schemas.ts';
import type { MonitorStore } from '../monitor-store.ts';
import type { Pool } from '../pool-schemas.ts';
import type { PoolStore } from '../pool-store.ts';
import type { ConfigChangeBus, ConfigChangeListener } from './changes.ts';
import type { LoadBalancer } from './schemas.ts';
import type { LoadBalancerStore } from './store.ts';

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
  }

  /** Grows with every load balancer, pool, monitor or zone change. */
  get version(): number {
    return this.#changes.version;
  }

  /** Called after every configuration change has committed; returns the unsubscribe function. */
  onChange(listener: ConfigChangeListener): () => void {
    return this.#changes.subscribe(listener);
  }

  /** `host` as in a Host header: case and a port or trailing dot do not matter. */
  async findByHostname(host: string): Promise<LoadBalancerRoute | undefined> {
    const name = hostnameOf(host);
    if (name === '') return undefined;
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
    const states = this.#health.originStates(pool.id);
    const origins = new Map(pool.origins.map((o) => [o.name, states.get(o.name)?.healthy ?? true]));
    return { monitored, healthy: this.#health.poolState(pool.id)?.healthy ?? true, origins };
  }
}

/** "Example.COM:8080" -> "example.com"; "[::1]:80" -> "::1" (never a load balancer's name). */
export function hostnameOf(host: string): string {
  let name = host.trim().toLowerCase();
  if (name.startsWith('[')) return name.slice(1, name.indexOf(']') >>> 0);
  const colon = name.lastIndexOf(':');
  if (colon >= 0) name = name.slice(0, colon);
  return name.endsWith('.') ? name.slice(0, -1) : name;
}
