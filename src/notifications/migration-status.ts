import { LOAD_BALANCING_HEALTH_ALERT } from './alert-types.ts';
import type { Policy, PoolDirectory } from './types.ts';

export interface LegacyMigrationStatus {
  /** True once no pool of the account keeps a legacy notification_email (deprecation notices then stop). */
  complete: boolean;
  pools_with_legacy_email: number;
  /** Enabled load_balancing_health_alert policies: what replaces the legacy emails. */
  health_alert_policies: number;
  /** Whether each asked pool is migrated: an enabled health policy covers it and its legacy email is empty. */
  pools: Record<string, boolean>;
}

/** A policy covers a pool when its pool_id filter lists it or it has no pool_id filter (all pools). */
export function policyCoversPool(policy: Policy, poolId: string): boolean {
  const pools = policy.filters['pool_id'];
  return pools === undefined || pools.includes(poolId);
}

/**
 * The migration away from pool notification_email is a process, not a stored field: a pool is migrated
 * when a new notification covers it and its notification_email is empty; the account's migration is
 * complete once no pool keeps a legacy email. The same definition as `ledge notifications
 * migration-status` (src/email-migration/status.ts), which computes it from the public API alone.
 */
export async function legacyMigrationStatus(
  accountId: string,
  deps: { pools: PoolDirectory; policies: Policy[] },
  poolIds: readonly string[] = [],
): Promise<LegacyMigrationStatus> {
  const remaining = await deps.pools.countPoolsWithLegacyEmail(accountId);
  const health = deps.policies.filter((policy) => policy.enabled && policy.alert_type === LOAD_BALANCING_HEALTH_ALERT);
  const complete = remaining === 0;
  const pools: Record<string, boolean> = {};
  for (const poolId of poolIds) {
    const email = await deps.pools.legacyEmailOf(accountId, poolId);
    pools[poolId] = email === '' && health.some((policy) => policyCoversPool(policy, poolId));
  }
  return { complete, pools_with_legacy_email: remaining, health_alert_policies: health.length, pools };
}
