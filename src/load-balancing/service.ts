import { shareConfigChanges } from './cluster-sync.ts';
import { LbErrors } from './errors.ts';
import type { Cluster } from '../cluster/index.ts';
import type { SqlDatabase } from '../db/index.ts';
import type { EgressPolicy } from '../egress/index.ts';
import type { Logger } from '../shared/logger.ts';
import { HealthChecker } from './health/checker.ts';
import type { HealthEventBus } from './health/events.ts';
import { SqlHealthStore, type HealthStore } from './health/health-store.ts';
import { HEALTH_RANGES, type HealthRange } from './health/health-samples.ts';
import { poolHealthView, type PoolHealth } from './health/health-view.ts';
import { PreviewService, type PreviewResult } from './health/preview.ts';
import { SqlPreviewStore } from './health/preview-store.ts';
import { MonitorService, type MonitorSettings } from './monitor-service.ts';
import { SqlMonitorStore } from './monitor-store.ts';
import type { PoolEnablementBus } from './pool-events.ts';
import { PoolService } from './pool-service.ts';
import { SqlPoolStore } from './pool-store.ts';
import { ConfigChangeBus } from './load-balancers/changes.ts';
import { LoadBalancerDirectory } from './load-balancers/directory.ts';
import { LoadBalancerService, type HostnameZoneLookup, type ReservedHostnames } from './load-balancers/service.ts';
import { SqlLoadBalancerStore } from './load-balancers/store.ts';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import type { Clock } from '../shared/clock.ts';

export type LoadBalancingSettings = MonitorSettings;

/**
 * The load-balancing subsystem of one platform: pools, monitors, zone load balancers, previews, health
 * state and the checker (a BackgroundService the platform starts), and the directory the traffic listener
 * reads. Constructing it starts nothing.
 */
export class LoadBalancing {
  readonly pools: PoolService;
  readonly monitors: MonitorService;
  readonly previews: PreviewService;
  readonly health: HealthStore;
  readonly checker: HealthChecker;
  readonly loadBalancers: LoadBalancerService;
  /** The traffic listener's read side: routes by hostname, pool health, configuration change signal. */
  readonly directory: LoadBalancerDirectory;

  constructor(deps: {
    db: SqlDatabase;
    logger: Logger;
    bus: HealthEventBus;
    /** Told when a pool is enabled or disabled, inside the write's transaction. */
    enablement?: PoolEnablementBus;
    settings: LoadBalancingSettings;
    /** Which addresses probes and previews may reach; checked on writes and on every connection. */
    egress: EgressPolicy;
    /** Hostnames no load balancer may take (Ledge's own: API host, localhost, functions domain). */
    reservedHostnames?: ReservedHostnames;
    /** The most specific zone of a hostname (zones subsystem): a load balancer must be created in it. */
    zoneOfHostname?: HostnameZoneLookup;
    /** Probe results and latency per pool and origin. */
    metrics?: LedgeMetrics | undefined;
    /** The other nodes on this database: origins are probed by their owner, changes reach every node. */
    cluster?: Cluster | undefined;
    /** The health checker's time (tests pass a clock they advance). */
    clock?: Clock | undefined;
  }) {
    const poolStore = new SqlPoolStore(deps.db);
    const monitorStore = new SqlMonitorStore(deps.db);
    this.pools = new PoolService(poolStore, monitorStore, deps.egress, deps.enablement);
    this.monitors = new MonitorService(monitorStore, poolStore, deps.settings, deps.egress);
    this.previews = new PreviewService(new SqlPreviewStore(deps.db), deps.egress);
    this.health = new SqlHealthStore(deps.db, deps.bus);
    this.checker = new HealthChecker({
      pools: poolStore,
      monitors: monitorStore,
      health: this.health,
      egress: deps.egress,
      logger: deps.logger.child({ component: 'lb-health' }),
      metrics: deps.metrics,
      owns: deps.cluster ? (key) => deps.cluster!.owns(key) : undefined,
      clock: deps.clock,
    });
    this.pools.onChange((accountId, poolId) => this.checker.refreshPool(accountId, poolId));
    this.monitors.onChange((accountId, monitorId) => this.checker.refreshMonitor(accountId, monitorId));

    const changes = new ConfigChangeBus();
    const loadBalancerStore = new SqlLoadBalancerStore(deps.db);
    this.loadBalancers = new LoadBalancerService(
      loadBalancerStore,
      poolStore,
      changes,
      deps.reservedHostnames ?? { domains: ['localhost'] },
      deps.zoneOfHostname,
    );
    this.directory = new LoadBalancerDirectory({
      loadBalancers: loadBalancerStore,
      pools: poolStore,
      monitors: monitorStore,
      health: this.health,
      changes,
    });
    this.pools.addReferenceSource((accountId, poolId) => this.loadBalancers.referencesTo(accountId, poolId));
    // Routes are cached by the bus's version, not by hostname: a pool change needs no lookup of the load
    // balancers using it (a bulk PATCH of 25 pools made 25 queries for nothing).
    this.pools.onChange((accountId, poolId) => changes.publish({ kind: 'pool', accountId, id: poolId, hostnames: [] }));
    this.monitors.onChange((accountId, monitorId) =>
      changes.publish({ kind: 'monitor', accountId, id: monitorId, hostnames: [] }),
    );
    if (deps.cluster) {
      deps.cluster.onLiveChange(() => this.checker.ownersChanged());
      shareConfigChanges(deps.cluster, changes, this.checker, (error) =>
        deps.logger.warn('could not re-plan health checks after a change on another node', { err: error }),
      );
    }
  }

  /** For notifications: does this account own this pool? */
  poolExists(accountId: string, poolId: string): Promise<boolean> {
    return this.pools.poolExists(accountId, poolId);
  }

  /** For notifications' migration status: pools still carrying a legacy notification_email. */
  countPoolsWithLegacyEmail(accountId: string): Promise<number> {
    return this.pools.countPoolsWithLegacyEmail(accountId);
  }

  /** For notifications' migration status: a pool's legacy email, undefined if the account has no such pool. */
  async legacyEmailOf(accountId: string, poolId: string): Promise<string | undefined> {
    if (!(await this.pools.poolExists(accountId, poolId))) return undefined;
    return (await this.pools.get(accountId, poolId)).notification_email;
  }

  async poolHealth(accountId: string, poolId: string): Promise<PoolHealth> {
    const pool = await this.pools.get(accountId, poolId);
    const monitor = pool.monitor ? await this.monitors.get(accountId, pool.monitor) : undefined;
    return poolHealthView(pool, monitor, this.health);
  }

  /**
   * `GET /pools/{id}/health/history?range=hour|day|week` (a Ledge extension, for the dashboard's charts): the
   * pool's and each origin's healthy share and RTT per bucket (see health/health-samples.ts for retention).
   */
  async poolHealthHistory(accountId: string, poolId: string, range: string) {
    if (!Object.hasOwn(HEALTH_RANGES, range)) throw LbErrors.validation('range must be hour, day or week');
    await this.pools.get(accountId, poolId);
    const chosen = range as HealthRange;
    return {
      pool_id: poolId,
      range: chosen,
      step_seconds: HEALTH_RANGES[chosen].step,
      points: await this.health.series(poolId, chosen),
    };
  }

  /** POST /pools/{id}/preview: the body is a monitor configuration to try on this pool. */
  async previewPool(accountId: string, poolId: string, body: unknown) {
    const pool = await this.pools.get(accountId, poolId);
    return this.previews.run(accountId, [pool], this.monitors.parse(body));
  }

  /** POST /monitors/{id}/preview: the body's configuration is tried on the pools that use the monitor. */
  async previewMonitor(accountId: string, monitorId: string, body: unknown) {
    await this.monitors.get(accountId, monitorId);
    const monitor = this.monitors.parse(body);
    const pools = (await this.pools.list(accountId, { page: 1, perPage: 1000, offset: 0, limit: 1000 }, monitorId))
      .pools;
    return this.previews.run(accountId, pools, monitor);
  }

  getPreview(accountId: string, previewId: string): Promise<PreviewResult> {
    return this.previews.get(accountId, previewId);
  }
}
