import type { Database } from '../db/index.ts';
import type { HealthEvent } from '../load-balancing/health/events.ts';
import { newId } from '../shared/ids.ts';
import { LOAD_BALANCING_HEALTH_ALERT } from './alert-types.ts';
import { LegacyEmailPath } from './legacy.ts';
import type { Outbox } from './outbox.ts';
import { describeEvent, policyEmail, webhookBody } from './payload.ts';
import { intervalMs } from './schemas.ts';
import { policyFromRow, type PolicyRow } from './store.ts';
import type { Policy } from './types.ts';

/** A missing filter matches everything; a present one must list the event's value. */
export function policyMatches(policy: Policy, event: HealthEvent): boolean {
  const listed = (key: string, value: string) => {
    const values = policy.filters[key];
    return values === undefined || values.includes(value);
  };
  return (
    listed('pool_id', event.poolId) &&
    listed('new_health', event.newHealth) &&
    listed('event_source', event.eventSource)
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
  readonly #outbox: Outbox;
  readonly #legacy: LegacyEmailPath;
  readonly #onWritten: () => void;
  readonly #policies = new Map<string, Policy>();

  constructor(options: {
    db: Database;
    outbox: Outbox;
    deprecationIntervalMs: number;
    /** Wakes the dispatcher; it runs after the current (synchronous) transaction has ended. */
    onWritten: () => void;
  }) {
    this.#db = options.db;
    this.#outbox = options.outbox;
    this.#legacy = new LegacyEmailPath(options.db, options.outbox, options.deprecationIntervalMs);
    this.#onWritten = options.onWritten;
  }

  readonly handle = (event: HealthEvent): void => {
    const nowMs = Date.now();
    let written = 0;
    for (const policy of this.#candidatePolicies(event.accountId)) {
      if (!policyMatches(policy, event) || this.#throttled(policy, event, nowMs)) continue;
      written += this.#writePolicyDeliveries(policy, event, nowMs);
    }
    written += this.#legacy.handle(event, nowMs);
    if (written > 0) this.#onWritten();
  };

  #candidatePolicies(accountId: string): Policy[] {
    return this.#db
      .all<PolicyRow>('SELECT * FROM notification_policies WHERE account_id = ? AND alert_type = ? AND enabled = 1', [
        accountId,
        LOAD_BALANCING_HEALTH_ALERT,
      ])
      .map((row) => this.#parsed(row));
  }

  /**
   * Policies are read for every event (so an edit applies to the next one) but rarely change: the parsed
   * form is reused while the stored row is the same, instead of parsing its JSON columns per event.
   */
  #parsed(row: PolicyRow): Policy {
    const key = `${row.id}\n${row.modified}\n${row.name}\n${row.alert_interval}\n${row.mechanisms}\n${row.filters}`;
    let policy = this.#policies.get(key);
    if (!policy) {
      if (this.#policies.size >= 1_000) this.#policies.clear();
      policy = policyFromRow(row);
      this.#policies.set(key, policy);
    }
    return policy;
  }

  /** `alert_interval`: the same health value for the same subject is not re-sent within the interval. */
  #throttled(policy: Policy, event: HealthEvent, nowMs: number): boolean {
    if (!policy.alert_interval) return false;
    const key = `${subjectOf(event)}:${event.newHealth}`;
    const last = this.#db.get<{ last_alert_ms: number }>(
      'SELECT last_alert_ms FROM notification_policy_throttle WHERE policy_id = ? AND subject = ?',
      [policy.id, key],
    );
    if (last && nowMs - last.last_alert_ms < intervalMs(policy.alert_interval)) return true;
    this.#db.run(
      `INSERT INTO notification_policy_throttle (policy_id, subject, last_alert_ms) VALUES (?, ?, ?)
       ON CONFLICT (policy_id, subject) DO UPDATE SET last_alert_ms = excluded.last_alert_ms`,
      [policy.id, key, nowMs],
    );
    return false;
  }

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

  #writePolicyDeliveries(policy: Policy, event: HealthEvent, nowMs: number): number {
    const base = {
      accountId: event.accountId,
      kind: 'alert' as const,
      eventId: event.id,
      eventMs: Date.parse(event.occurredAt),
      policyId: policy.id,
      policyName: policy.name,
      alertType: LOAD_BALANCING_HEALTH_ALERT,
      description: describeEvent(event),
    };
    const webhooks = policy.mechanisms.webhooks ?? [];
    const emails = policy.mechanisms.email ?? [];
    if (webhooks.length > 0) {
      const payload = webhookBody(event, policy, this.#correlationId(policy, event));
      const messageId = this.#outbox.saveMessage(payload);
      this.#outbox.append(
        { ...base, mechanismType: 'webhook', messageId, payload },
        webhooks.map((webhook) => webhook.id),
        nowMs,
      );
    }
    if (emails.length > 0) {
      const payload = JSON.stringify(policyEmail(event, policy));
      const messageId = this.#outbox.saveMessage(payload);
      this.#outbox.append(
        { ...base, mechanismType: 'email', messageId, payload },
        emails.map((email) => email.id),
        nowMs,
      );
    }
    return webhooks.length + emails.length;
  }
}
