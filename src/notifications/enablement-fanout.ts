import type { TransactionScope } from '../db/index.ts';
import type { PoolEnablementEvent } from '../load-balancing/index.ts';
import { LOAD_BALANCING_POOL_ENABLEMENT_ALERT } from './alert-types.ts';
import { describeEnablement, enablementEmail, enablementWebhookBody } from './payload.ts';
import { filterLists, type PolicyDeliveries } from './policy-deliveries.ts';
import type { Policy } from './types.ts';
import type { Clock } from '../shared/clock.ts';

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
  readonly #clock: Clock;

  constructor(options: { deliveries: PolicyDeliveries; onWritten: () => void; clock: Clock }) {
    this.#clock = options.clock;
    this.#deliveries = options.deliveries;
    this.#onWritten = options.onWritten;
  }

  readonly handle = async (event: PoolEnablementEvent, scope: TransactionScope): Promise<void> => {
    const nowMs = this.#clock.now();
    let written = 0;
    const policies = await this.#deliveries.enabledPolicies(
      scope,
      event.accountId,
      LOAD_BALANCING_POOL_ENABLEMENT_ALERT,
    );
    for (const policy of policies) {
      if (!enablementPolicyMatches(policy, event)) continue;
      const key = `pool:${event.poolId}:enabled=${event.enabled}`;
      if (await this.#deliveries.throttled(scope, policy, key, nowMs)) continue;
      written += await this.#deliveries.write(
        scope,
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
    if (written > 0) scope.afterCommit(this.#onWritten);
  };
}
