import { LbErrors } from './errors.ts';
import type { HealthChecker } from './health/checker.ts';
import type { HealthStore } from './health/health-store.ts';
import { HEALTH_RANGES, type HealthRange } from './health/health-samples.ts';
import { poolHealthView, type PoolHealth } from './health/health-view.ts';
import type { PreviewResult, PreviewService } from './health/preview.ts';
import type { MonitorService, MonitorSettings } from './monitor-service.ts';
import type { PoolService } from './pool-service.ts';
import type { LoadBalancerDirectory } from './load-balancers/directory.ts';
import type { LoadBalancerService } from './load-balancers/service.ts';

export type LoadBalancingSettings = MonitorSettings;

/** The parts the load-balancing subsystem is made of; composed in subsystem.ts, the subsystem's one root. */
export interface LoadBalancingParts {
  pools: PoolService;
  monitors: MonitorService;
  previews: PreviewService;
  health: HealthStore;
  checker: HealthChecker;
  loadBalancers: LoadBalancerService;
  directory: LoadBalancerDirectory;
}

/**
 * The load-balancing subsystem's face to the platform and its routes: pools, monitors, zone load balancers,
 * previews, health state and the checker (a BackgroundService the platform starts), and the directory the
 * traffic listener reads. It is handed its parts ready-made (src/load-balancing/subsystem.ts composes them)
 * and answers the questions that span several of them.
 */
export class LoadBalancing implements LoadBalancingParts {
  readonly pools: PoolService;
  readonly monitors: MonitorService;
  readonly previews: PreviewService;
  readonly health: HealthStore;
  readonly checker: HealthChecker;
  readonly loadBalancers: LoadBalancerService;
  /** The traffic listener's read side: routes by hostname, pool health, configuration change signal. */
  readonly directory: LoadBalancerDirectory;

  constructor(parts: LoadBalancingParts) {
    this.pools = parts.pools;
    this.monitors = parts.monitors;
    this.previews = parts.previews;
    this.health = parts.health;
    this.checker = parts.checker;
    this.loadBalancers = parts.loadBalancers;
    this.directory = parts.directory;
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
