import type { TransactionScope } from '../db/index.ts';
import type { HealthEvent } from '../load-balancing/index.ts';
import { newId } from '../shared/ids.ts';
import type { AlertStateStore } from './alert-state-store.ts';
import { LOAD_BALANCING_HEALTH_ALERT } from './alert-types.ts';
import { LegacyEmailPath } from './legacy.ts';
import type { Outbox } from './outbox.ts';
import { describeEvent, policyEmail, webhookBody } from './payload.ts';
import { filterLists, type PolicyDeliveries } from './policy-deliveries.ts';
import type { Policy } from './types.ts';
import type { Clock } from '../shared/clock.ts';

/** A missing filter matches everything; a present one must list the event's value. */
export function policyMatches(policy: Policy, event: HealthEvent): boolean {
  return (
    filterLists(policy, 'pool_id', event.poolId) &&
    filterLists(policy, 'new_health', event.newHealth) &&
    filterLists(policy, 'event_source', event.eventSource)
  );
}

/** The pool or origin an event is about: throttling and incident correlation are per subject. */
function subjectOf(event: HealthEvent): string {
  return event.eventSource === 'pool' ? `pool:${event.poolId}` : `origin:${event.poolId}:${event.originName ?? ''}`;
}

/**
 * Turns one health event into outbox rows inside the transaction that records the event (the
 * HealthEventBus contract: its scope is handed to every write): one row per mechanism target of every matching enabled policy, plus the
 * legacy notification_email path. Errors propagate so that the event and its deliveries roll back together.
 */
export class HealthEventFanout {
  readonly #state: AlertStateStore;
  readonly #deliveries: PolicyDeliveries;
  readonly #legacy: LegacyEmailPath;
  readonly #onWritten: () => void;
  readonly #clock: Clock;

  constructor(options: {
    state: AlertStateStore;
    outbox: Outbox;
    deliveries: PolicyDeliveries;
    deprecationIntervalMs: number;
    /** Wakes the dispatcher once the event's transaction has committed. */
    onWritten: () => void;
    /** Throttles and deprecation intervals are measured on it. */
    clock: Clock;
  }) {
    this.#clock = options.clock;
    this.#state = options.state;
    this.#deliveries = options.deliveries;
    this.#legacy = new LegacyEmailPath(options.state, options.outbox, options.deprecationIntervalMs);
    this.#onWritten = options.onWritten;
  }

  readonly handle = async (event: HealthEvent, scope: TransactionScope): Promise<void> => {
    const nowMs = this.#clock.now();
    let written = 0;
    for (const policy of await this.#deliveries.enabledPolicies(scope, event.accountId, LOAD_BALANCING_HEALTH_ALERT)) {
      if (!policyMatches(policy, event)) continue;
      if (await this.#deliveries.throttled(scope, policy, `${subjectOf(event)}:${event.newHealth}`, nowMs)) continue;
      written += await this.#deliveries.write(
        scope,
        policy,
        {
          accountId: event.accountId,
          eventId: event.id,
          eventMs: Date.parse(event.occurredAt),
          alertType: LOAD_BALANCING_HEALTH_ALERT,
          description: describeEvent(event),
          webhookBody: async () => webhookBody(event, policy, await this.#correlationId(scope, policy, event)),
          email: () => policyEmail(event, policy),
        },
        nowMs,
      );
    }
    written += await this.#legacy.handle(scope, event, nowMs);
    if (written > 0) scope.afterCommit(this.#onWritten);
  };

  /** An Unhealthy alert opens an incident; the Healthy alert that follows closes it with the same id. */
  async #correlationId(scope: TransactionScope, policy: Policy, event: HealthEvent): Promise<string> {
    const subject = subjectOf(event);
    const open = await this.#state.openIncident(scope.tx, policy.id, subject);
    if (event.newHealth === 'Healthy') {
      if (open) await this.#state.endIncident(scope.tx, policy.id, subject);
      return open ?? newId();
    }
    if (open) return open;
    const id = newId();
    await this.#state.startIncident(scope.tx, policy.id, subject, id);
    return id;
  }
}
