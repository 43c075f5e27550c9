import { isEmail } from '../accounts/index.ts';
import { findAlertType } from './alert-types.ts';
import { NotificationErrors } from './errors.ts';
import type { PolicyInput } from './schemas.ts';
import type { NotificationStore } from './store.ts';
import type { PoolDirectory } from './types.ts';

/**
 * Checks a policy against the catalogue and the account: the alert type exists, each filter key is one the
 * type accepts, closed-set values are in their set, pool and webhook ids belong to this account, and every
 * email address is well formed. The first problem found is the error.
 */
export async function validatePolicy(
  accountId: string,
  input: PolicyInput,
  deps: { store: NotificationStore; pools: PoolDirectory },
): Promise<void> {
  const alertType = findAlertType(input.alert_type);
  if (!alertType) throw NotificationErrors.unknownAlertType(input.alert_type);
  const allowed = alertType.filters.map((filter) => filter.key);
  for (const [key, values] of Object.entries(input.filters ?? {})) {
    const option = alertType.filters.find((filter) => filter.key === key);
    if (!option) throw NotificationErrors.filterNotAllowed(key, alertType.type, allowed);
    for (const value of values) {
      if (option.values && !option.values.includes(value))
        throw NotificationErrors.filterValue(key, value, option.values);
    }
  }
  for (const poolId of input.filters?.['pool_id'] ?? []) {
    if (!(await deps.pools.poolExists(accountId, poolId))) throw NotificationErrors.unknownPool(poolId);
  }
  for (const { id } of input.mechanisms.webhooks ?? []) {
    if (!(await deps.store.getWebhook(accountId, id))) throw NotificationErrors.unknownWebhook(id);
  }
  for (const { id } of input.mechanisms.email ?? []) {
    // One address per entry: separators would smuggle several recipients into one mechanism.
    if (!isEmail(id) || /[,;<>]/.test(id)) throw NotificationErrors.invalidEmail(id);
  }
  const targets = (input.mechanisms.webhooks?.length ?? 0) + (input.mechanisms.email?.length ?? 0);
  if (targets === 0)
    throw NotificationErrors.validation('mechanisms: at least one email address or webhook is required');
}
