import type { Subsystem } from '../api-kit/subsystem.ts';
import type { Cluster } from '../cluster/index.ts';
import type { SqlDatabase } from '../db/index.ts';
import type { EgressPolicy } from '../egress/index.ts';
import type { Clock } from '../shared/clock.ts';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import type { Logger } from '../shared/logger.ts';
import { shareConfigChanges } from './cluster-sync.ts';
import { HealthChecker } from './health/checker.ts';
import type { HealthEventBus } from './health/events.ts';
import { SqlHealthStore } from './health/health-store.ts';
import { PreviewService } from './health/preview.ts';
import { SqlPreviewStore } from './health/preview-store.ts';
import { ConfigChangeBus } from './load-balancers/changes.ts';
import { LoadBalancerDirectory } from './load-balancers/directory.ts';
import { loadBalancerRoutes, type ZoneResolver } from './load-balancers/routes.ts';
import { LoadBalancerService, type HostnameZoneLookup, type ReservedHostnames } from './load-balancers/service.ts';
import { SqlLoadBalancerStore } from './load-balancers/store.ts';
import { MonitorService } from './monitor-service.ts';
import { SqlMonitorStore } from './monitor-store.ts';
import type { PoolEnablementBus } from './pool-events.ts';
import { PoolService } from './pool-service.ts';
import { SqlPoolStore } from './pool-store.ts';
import { loadBalancingRoutes } from './routes.ts';
import { LoadBalancing, type LoadBalancingSettings } from './service.ts';

export interface LoadBalancingSubsystem extends Subsystem {
  service: LoadBalancing;
}

/** What the platform hands the load-balancing subsystem (src/server/platform.ts). */
export interface LoadBalancingDeps {
  db: SqlDatabase;
  logger: Logger;
  /** Its part of the server's settings (src/server/settings/schema.ts). */
  settings: LoadBalancingSettings;
  bus: HealthEventBus;
  /** Told when a pool is enabled or disabled, inside the write's transaction. */
  enablement?: PoolEnablementBus;
  /** Which addresses probes and previews may reach; checked on writes and on every connection. */
  egress: EgressPolicy;
  /** Hostnames no load balancer may take (Ledge's own: API host, localhost, functions domain). */
  reservedHostnames?: ReservedHostnames;
  /** The most specific zone of a hostname (zones subsystem): a load balancer must be created in it. */
  zoneOfHostname?: HostnameZoneLookup;
  /** Answers a caller's zone (404 for unknown and foreign ones) for the zone-scoped routes. */
  resolveZone: ZoneResolver;
  /** Probe results and latency per pool and origin. */
  metrics?: LedgeMetrics | undefined;
  /** The other nodes on this database: origins are probed by their owner, changes reach every node. */
  cluster?: Cluster | undefined;
  /** The health checker's time (tests pass a clock they advance). */
  clock: Clock;
}

/**
 * Pools, monitors, previews, zone load balancers and the health checker (its background service), composed
 * here and nowhere else: the stores, the services over them, the checker and the change signal the traffic
 * listener's directory caches by. Building it starts nothing.
 */
export function createLoadBalancingSubsystem(deps: LoadBalancingDeps): LoadBalancingSubsystem {
  const poolStore = new SqlPoolStore(deps.db);
  const monitorStore = new SqlMonitorStore(deps.db);
  const pools = new PoolService(poolStore, monitorStore, deps.egress, deps.enablement, deps.clock);
  const monitors = new MonitorService(monitorStore, poolStore, deps.settings, deps.egress, deps.clock);
  const previews = new PreviewService(new SqlPreviewStore(deps.db), deps.egress, deps.clock);
  const health = new SqlHealthStore(deps.db, deps.bus, deps.clock);
  const cluster = deps.cluster;
  const checker = new HealthChecker({
    pools: poolStore,
    monitors: monitorStore,
    health,
    egress: deps.egress,
    logger: deps.logger.child({ component: 'lb-health' }),
    metrics: deps.metrics,
    owns: cluster ? (key) => cluster.owns(key) : undefined,
    clock: deps.clock,
  });
  pools.onChange((accountId, poolId) => checker.refreshPool(accountId, poolId));
  monitors.onChange((accountId, monitorId) => checker.refreshMonitor(accountId, monitorId));

  const changes = new ConfigChangeBus();
  const loadBalancerStore = new SqlLoadBalancerStore(deps.db);
  const loadBalancers = new LoadBalancerService(
    loadBalancerStore,
    poolStore,
    changes,
    deps.reservedHostnames ?? { domains: ['localhost'] },
    deps.zoneOfHostname,
    deps.clock,
  );
  const directory = new LoadBalancerDirectory({
    loadBalancers: loadBalancerStore,
    pools: poolStore,
    monitors: monitorStore,
    health,
    changes,
  });
  pools.addReferenceSource((accountId, poolId) => loadBalancers.referencesTo(accountId, poolId));
  // Routes are cached by the bus's version, not by hostname: a pool change needs no lookup of the load
  // balancers using it (a bulk PATCH of 25 pools made 25 queries for nothing).
  pools.onChange((accountId, poolId) => changes.publish({ kind: 'pool', accountId, id: poolId, hostnames: [] }));
  monitors.onChange((accountId, monitorId) =>
    changes.publish({ kind: 'monitor', accountId, id: monitorId, hostnames: [] }),
  );
  if (cluster) {
    cluster.onLiveChange(() => checker.ownersChanged());
    shareConfigChanges(cluster, changes, checker, (error) =>
      deps.logger.warn('could not re-plan health checks after a change on another node', { err: error }),
    );
  }

  const service = new LoadBalancing({ pools, monitors, previews, health, checker, loadBalancers, directory });
  return {
    name: 'load-balancing',
    service,
    background: [checker],
    mountRoutes: (api) => {
      api.route('/accounts/:account_id/load_balancers', loadBalancingRoutes(service));
      api.route('/zones/:zone_id/load_balancers', loadBalancerRoutes(loadBalancers, deps.resolveZone));
    },
  };
}
