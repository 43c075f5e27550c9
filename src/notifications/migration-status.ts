import { LOAD_BALANCING_HEALTH_ALERT } from './alert-types.ts';
import type { Policy, PoolDirectory } from './types.ts';

export interface LegacyMigrationStatus {
  /** True once no pool of the account keeps a legacy notification_email (deprecation notices then stop). */
  complete: boolean;
  pools_with_legacy_email: number;
  /** Enabled load_balancing_health_alert policies: what replaces the legacy emails. */
  health_alert_policies: number;
  /** Whether each asked pool is migrated: an enabled health policy covers it and the migration is complete. */
  pools: Record<string, boolean>;
}

/** A policy covers a pool when its pool_id filter lists it or it has no pool_id filter (all pools). */
export function policyCoversPool(policy: Policy, poolId: string): boolean {
  const pools = policy.filters['pool_id'];
  return pools === undefined || pools.includes(poolId);
}

/**
 * The migration away from pool notification_email is a process, not a stored field: a pool is migrated
 * when a new notification exists for it and notification_email is empty on every pool of the account.
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
  for (const poolId of poolIds) pools[poolId] = complete && health.some((policy) => policyCoversPool(policy, poolId));
  return { complete, pools_with_legacy_email: remaining, health_alert_policies: health.length, pools };
}
