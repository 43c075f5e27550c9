import type { PoolEnablementEvent } from '../load-balancing/index.ts';
import { LOAD_BALANCING_POOL_ENABLEMENT_ALERT } from './alert-types.ts';
import { describeEnablement, enablementEmail, enablementWebhookBody } from './payload.ts';
import { filterLists, type PolicyDeliveries } from './policy-deliveries.ts';
import type { Policy } from './types.ts';

/** `pool_id` and `enabled` ("true" / "false"); a missing filter matches everything. */
export function enablementPolicyMatches(policy: Policy, event: PoolEnablementEvent): boolean {
  return filterLists(policy, 'pool_id', event.poolId) && filterLists(policy, 'enabled', String(event.enabled));
}

/**
 * `load_balancing_pool_enablement_alert`: a pool switched on or off becomes outbox rows for every matching
 * enabled policy, inside the transaction of the pool write (the PoolEnablementBus contract), so the
 * change and its alerts commit together.
 */
export class PoolEnablementFanout {
  readonly #deliveries: PolicyDeliveries;
  readonly #onWritten: () => void;

  constructor(options: { deliveries: PolicyDeliveries; onWritten: () => void }) {
    this.#deliveries = options.deliveries;
    this.#onWritten = options.onWritten;
  }

  readonly handle = (event: PoolEnablementEvent): void => {
    const nowMs = Date.now();
    let written = 0;
    for (const policy of this.#deliveries.enabledPolicies(event.accountId, LOAD_BALANCING_POOL_ENABLEMENT_ALERT)) {
      if (!enablementPolicyMatches(policy, event)) continue;
      if (this.#deliveries.throttled(policy, `pool:${event.poolId}:enabled=${event.enabled}`, nowMs)) continue;
      written += this.#deliveries.write(
        policy,
        {
          accountId: event.accountId,
          eventId: null,
          eventMs: Date.parse(event.occurredAt),
          alertType: LOAD_BALANCING_POOL_ENABLEMENT_ALERT,
          description: describeEnablement(event),
          webhookBody: () => enablementWebhookBody(event, policy),
          email: () => enablementEmail(event, policy),
        },
        nowMs,
      );
    }
    if (written > 0) this.#onWritten();
  };
}
