import type { Database } from '../db/index.ts';
import type { HealthEvent } from '../load-balancing/index.ts';
import { newId } from '../shared/ids.ts';
import { LOAD_BALANCING_HEALTH_ALERT } from './alert-types.ts';
import { LegacyEmailPath } from './legacy.ts';
import type { Outbox } from './outbox.ts';
import { describeEvent, policyEmail, webhookBody } from './payload.ts';
import { filterLists, type PolicyDeliveries } from './policy-deliveries.ts';
import type { Policy } from './types.ts';

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
 * Turns one health event into outbox rows, synchronously, inside the transaction that records the event
 * (the HealthEventBus contract): one row per mechanism target of every matching enabled policy, plus the
 * legacy notification_email path. Errors propagate so that the event and its deliveries roll back together.
 */
export class HealthEventFanout {
  readonly #db: Database;
  readonly #deliveries: PolicyDeliveries;
  readonly #legacy: LegacyEmailPath;
  readonly #onWritten: () => void;

  constructor(options: {
    db: Database;
    outbox: Outbox;
    deliveries: PolicyDeliveries;
    deprecationIntervalMs: number;
    /** Wakes the dispatcher; it runs after the current (synchronous) transaction has ended. */
    onWritten: () => void;
  }) {
    this.#db = options.db;
    this.#deliveries = options.deliveries;
    this.#legacy = new LegacyEmailPath(options.db, options.outbox, options.deprecationIntervalMs);
    this.#onWritten = options.onWritten;
  }

  readonly handle = (event: HealthEvent): void => {
    const nowMs = Date.now();
    let written = 0;
    for (const policy of this.#deliveries.enabledPolicies(event.accountId, LOAD_BALANCING_HEALTH_ALERT)) {
      if (!policyMatches(policy, event)) continue;
      if (this.#deliveries.throttled(policy, `${subjectOf(event)}:${event.newHealth}`, nowMs)) continue;
      written += this.#deliveries.write(
        policy,
        {
          accountId: event.accountId,
          eventId: event.id,
          eventMs: Date.parse(event.occurredAt),
          alertType: LOAD_BALANCING_HEALTH_ALERT,
          description: describeEvent(event),
          webhookBody: () => webhookBody(event, policy, this.#correlationId(policy, event)),
          email: () => policyEmail(event, policy),
        },
        nowMs,
      );
    }
    written += this.#legacy.handle(event, nowMs);
    if (written > 0) this.#onWritten();
  };

  /** An Unhealthy alert opens an incident; the Healthy alert that follows closes it with the same id. */
  #correlationId(policy: Policy, event: HealthEvent): string {
    const subject = subjectOf(event);
    const open = this.#db.get<{ correlation_id: string }>(
      'SELECT correlation_id FROM notification_incidents WHERE policy_id = ? AND subject = ?',
      [policy.id, subject],
    );
    if (event.newHealth === 'Healthy') {
      if (open)
        this.#db.run('DELETE FROM notification_incidents WHERE policy_id = ? AND subject = ?', [policy.id, subject]);
      return open?.correlation_id ?? newId();
    }
    if (open) return open.correlation_id;
    const id = newId();
    this.#db.run('INSERT INTO notification_incidents (policy_id, subject, correlation_id) VALUES (?, ?, ?)', [
      policy.id,
      subject,
      id,
    ]);
    return id;
  }
}
