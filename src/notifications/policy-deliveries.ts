import type { Database } from '../db/index.ts';
import type { MailContent } from './mail.ts';
import type { Outbox } from './outbox.ts';
import { intervalMs } from './schemas.ts';
import { policyFromRow, type PolicyRow } from './store.ts';
import type { Policy } from './types.ts';

/** One alert of one policy, ready to be written for each of the policy's mechanism targets. */
export interface PolicyAlert {
  accountId: string;
  /** The recorded event it comes from, when events of its type are recorded (health events). */
  eventId: number | null;
  eventMs: number;
  alertType: string;
  description: string;
  /** Built only when the policy has webhooks / email targets. */
  webhookBody: () => string;
  email: () => MailContent;
}

/**
 * What every alert type's fan-out shares: reading the account's enabled policies of a type, the
 * `alert_interval` throttle, and writing one outbox row per mechanism target (each body stored once).
 * Synchronous: it runs inside the transaction of the event it handles.
 */
export class PolicyDeliveries {
  readonly #db: Database;
  readonly #outbox: Outbox;
  readonly #parsed = new Map<string, Policy>();

  constructor(db: Database, outbox: Outbox) {
    this.#db = db;
    this.#outbox = outbox;
  }

  /** Read for every event (an edit applies to the next one). */
  enabledPolicies(accountId: string, alertType: string): Policy[] {
    return this.#db
      .all<PolicyRow>('SELECT * FROM notification_policies WHERE account_id = ? AND alert_type = ? AND enabled = 1', [
        accountId,
        alertType,
      ])
      .map((row) => this.#parse(row));
  }

  /**
   * `alert_interval`: an alert with the same key (subject and value) is not re-sent within the interval.
   * Records the send when it is not throttled.
   */
  throttled(policy: Policy, key: string, nowMs: number): boolean {
    if (!policy.alert_interval) return false;
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

  /** Writes the alert for every mechanism target of the policy; returns how many rows. */
  write(policy: Policy, alert: PolicyAlert, nowMs: number): number {
    const base = {
      accountId: alert.accountId,
      kind: 'alert' as const,
      eventId: alert.eventId,
      eventMs: alert.eventMs,
      policyId: policy.id,
      policyName: policy.name,
      alertType: alert.alertType,
      description: alert.description,
    };
    const webhooks = policy.mechanisms.webhooks ?? [];
    const emails = policy.mechanisms.email ?? [];
    if (webhooks.length > 0) {
      const payload = alert.webhookBody();
      const messageId = this.#outbox.saveMessage(payload);
      this.#outbox.append(
        { ...base, mechanismType: 'webhook', messageId, payload },
        webhooks.map((webhook) => webhook.id),
        nowMs,
      );
    }
    if (emails.length > 0) {
      const payload = JSON.stringify(alert.email());
      const messageId = this.#outbox.saveMessage(payload);
      this.#outbox.append(
        { ...base, mechanismType: 'email', messageId, payload },
        emails.map((email) => email.id),
        nowMs,
      );
    }
    return webhooks.length + emails.length;
  }

  /** Policies rarely change: the parsed form is reused while the stored row is the same. */
  #parse(row: PolicyRow): Policy {
    const key = `${row.id}\n${row.modified}\n${row.name}\n${row.alert_interval}\n${row.mechanisms}\n${row.filters}`;
    let policy = this.#parsed.get(key);
    if (!policy) {
      if (this.#parsed.size >= 1_000) this.#parsed.clear();
      policy = policyFromRow(row);
      this.#parsed.set(key, policy);
    }
    return policy;
  }
}

/** A missing filter matches everything; a present one must list the value. */
export function filterLists(policy: Policy, key: string, value: string): boolean {
  const values = policy.filters[key];
  return values === undefined || values.includes(value);
}
