import { parseAddresses } from './addresses.ts';
import type { AlertPolicy, PoolSummary } from './api.ts';

export const HEALTH_ALERT = 'load_balancing_health_alert';

/**
 * Whether an enabled health-alert policy already sends this pool's alerts to every one of the given
 * addresses. A policy without a pool_id filter covers every pool of the account.
 */
export function policyCovers(policy: AlertPolicy, poolId: string, addresses: readonly string[]): boolean {
  if (!policy.enabled || policy.alert_type !== HEALTH_ALERT) return false;
  const poolFilter = policy.filters?.['pool_id'];
  if (poolFilter && !poolFilter.includes(poolId)) return false;
  const recipients = new Set((policy.mechanisms.email ?? []).map((e) => e.id.toLowerCase()));
  return addresses.every((address) => recipients.has(address.toLowerCase()));
}

/** Policies that send a pool's health alerts at all (for migration-status, where the old addresses are gone). */
export function policiesForPool(policies: readonly AlertPolicy[], poolId: string): AlertPolicy[] {
  return policies.filter(
    (p) =>
      p.enabled && p.alert_type === HEALTH_ALERT && (!p.filters?.['pool_id'] || p.filters['pool_id'].includes(poolId)),
  );
}

export function isCovered(policies: readonly AlertPolicy[], pool: PoolSummary): boolean {
  const addresses = parseAddresses(pool.notification_email);
  return policies.some((policy) => policyCovers(policy, pool.id, addresses));
}
