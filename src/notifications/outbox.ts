import type { Database } from '../db/index.ts';

export type DeliveryKind = 'alert' | 'legacy_alert' | 'deprecation_notice';
export type MechanismType = 'webhook' | 'email';

/** One delivery to write: one mechanism target of one alert. */
export interface NewDelivery {
  accountId: string;
  kind: DeliveryKind;
  eventId: number | null;
  eventMs: number;
  policyId: string | null;
  policyName: string;
  alertType: string;
  description: string;
  mechanismType: MechanismType;
  /** Webhook id, or email address. */
  target: string;
  /** Webhook: the JSON body. Email: a JSON MailMessage. */
  payload: string;
}

export interface OutboxRow {
  id: number;
  account_id: string;
  kind: DeliveryKind;
  event_id: number | null;
  event_ms: number;
  policy_id: string | null;
  policy_name: string;
  alert_type: string;
  description: string;
  mechanism_type: MechanismType;
  target: string;
  payload: string;
  attempts: number;
  created_ms: number;
}

/**
 * The durable delivery queue. Writers append inside their own transaction; the dispatcher claims due rows
 * by pushing `next_attempt_ms` to a lease deadline (so one index serves both "due" and "not claimed"), and
 * removes a row once it is delivered or given up. History keeps the record of every attempt.
 */
export class Outbox {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Synchronous: called from the health-event listener inside the event's transaction. */
  append(delivery: NewDelivery, nowMs: number): void {
    this.#db.run(
      `INSERT INTO notification_outbox (account_id, kind, event_id, event_ms, policy_id, policy_name, alert_type, description,
         mechanism_type, target, payload, next_attempt_ms, created_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        delivery.accountId,
        delivery.kind,
        delivery.eventId,
        delivery.eventMs,
        delivery.policyId,
        delivery.policyName,
        delivery.alertType,
        delivery.description,
        delivery.mechanismType,
        delivery.target,
        delivery.payload,
        nowMs,
        nowMs,
      ],
    );
  }

  /**
   * Claims up to `limit` due rows for `leaseMs` in one statement (atomic on its own); a crashed claimer's
   * rows come due again when the lease expires.
   */
  claim(nowMs: number, limit: number, leaseMs: number): OutboxRow[] {
    return this.#db.all<OutboxRow>(
      `UPDATE notification_outbox SET next_attempt_ms = :lease, lease_until_ms = :lease
        WHERE id IN (SELECT id FROM notification_outbox WHERE next_attempt_ms <= :now ORDER BY next_attempt_ms, id LIMIT :limit)
        RETURNING id, account_id, kind, event_id, event_ms, policy_id, policy_name, alert_type, description, mechanism_type,
                  target, payload, attempts, created_ms`,
      { now: nowMs, lease: nowMs + leaseMs, limit },
    );
  }

  /**
   * At start, rows leased by a previous process (killed mid-send) are due again at once: a single server
   * owns its outbox, so nobody else can be sending them. Returns how many were released.
   */
  releaseLeases(nowMs: number): number {
    return this.#db.run('UPDATE notification_outbox SET next_attempt_ms = ?, lease_until_ms = 0 WHERE lease_until_ms > 0', [nowMs])
      .changes;
  }

  removeAll(ids: readonly number[]): void {
    if (ids.length === 0) return;
    this.#db.run('DELETE FROM notification_outbox WHERE id IN (SELECT value FROM json_each(?))', [JSON.stringify(ids)]);
  }

  retryLater(id: number, attempts: number, nextAttemptMs: number, error: string): void {
    this.#db.run(
      'UPDATE notification_outbox SET attempts = ?, next_attempt_ms = ?, lease_until_ms = 0, last_error = ? WHERE id = ?',
      [attempts, nextAttemptMs, error, id],
    );
  }

  /** When the next row comes due (claimed rows included, at their lease deadline), or undefined if empty. */
  nextDueMs(): number | undefined {
    return this.#db.get<{ due: number | null }>('SELECT MIN(next_attempt_ms) AS due FROM notification_outbox')?.due ?? undefined;
  }

  pendingCount(accountId?: string): number {
    const row = accountId
      ? this.#db.get<{ n: number }>('SELECT COUNT(*) AS n FROM notification_outbox WHERE account_id = ?', [accountId])
      : this.#db.get<{ n: number }>('SELECT COUNT(*) AS n FROM notification_outbox');
    return row?.n ?? 0;
  }
}
