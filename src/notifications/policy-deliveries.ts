import type { TransactionScope } from '../db/index.ts';
import type { AlertStateStore } from './alert-state-store.ts';
import type { MailContent } from './mail.ts';
import type { Outbox } from './outbox.ts';
import { intervalMs } from './schemas.ts';
import { policyFromRow, type NotificationStore, type PolicyRow } from './store.ts';
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
  webhookBody: () => string | Promise<string>;
  email: () => MailContent;
}

/**
 * What every alert type's fan-out shares: reading the account's enabled policies of a type, the
 * `alert_interval` throttle, and writing one outbox row per mechanism target (each body stored once).
 * Everything runs inside the transaction of the event it handles (its scope).
 */
export class PolicyDeliveries {
  readonly #store: NotificationStore;
  readonly #state: AlertStateStore;
  readonly #outbox: Outbox;
  readonly #parsed = new Map<string, Policy>();

  constructor(deps: { store: NotificationStore; state: AlertStateStore; outbox: Outbox }) {
    this.#store = deps.store;
    this.#state = deps.state;
    this.#outbox = deps.outbox;
  }

  /** Read for every event (an edit applies to the next one). */
  async enabledPolicies(scope: TransactionScope, accountId: string, alertType: string): Promise<Policy[]> {
    const rows = await this.#store.enabledPolicyRows(scope.tx, accountId, alertType);
    return rows.map((row) => this.#parse(row));
  }

  /**
   * `alert_interval`: an alert with the same key (subject and value) is not re-sent within the interval.
   * Records the send when it is not throttled.
   */
  async throttled(scope: TransactionScope, policy: Policy, key: string, nowMs: number): Promise<boolean> {
    if (!policy.alert_interval) return false;
    const interval = intervalMs(policy.alert_interval);
    return !(await this.#state.takeThrottleSlot(scope.tx, policy.id, key, nowMs, interval));
  }

  /** Writes the alert for every mechanism target of the policy; returns how many rows. */
  async write(scope: TransactionScope, policy: Policy, alert: PolicyAlert, nowMs: number): Promise<number> {
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
      const payload = await alert.webhookBody();
      const messageId = await this.#outbox.saveMessage(scope.tx, payload);
      await this.#outbox.append(
        scope,
        { ...base, mechanismType: 'webhook', messageId, payload },
        webhooks.map((webhook) => webhook.id),
        nowMs,
      );
    }
    if (emails.length > 0) {
      const payload = JSON.stringify(alert.email());
      const messageId = await this.#outbox.saveMessage(scope.tx, payload);
      await this.#outbox.append(
        scope,
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
