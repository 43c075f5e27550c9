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
  /** The stored message (see saveMessage); null when the text is written at send time. */
  messageId: number | null;
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
  message_id: number | null;
  /** The message body (webhook JSON, or a JSON { subject, text } mail), loaded when the row is claimed. */
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

  /** Stores a message body once for all the deliveries (and history rows) of one alert; returns its id. */
  saveMessage(body: string): number {
    return this.#db.run('INSERT INTO notification_messages (body) VALUES (?)', [body]).lastInsertRowid;
  }

  /**
   * Appends one row per target, all sharing everything else, in one statement (an alert fanned out to many
   * webhooks is one insert). Synchronous: called from the health-event listener inside its transaction.
   */
  append(delivery: Omit<NewDelivery, 'target'>, targets: readonly string[], nowMs: number): void {
    if (targets.length === 0) return;
    this.#db.run(
      `INSERT INTO notification_outbox (account_id, kind, event_id, event_ms, policy_id, policy_name, alert_type, description,
         mechanism_type, target, message_id, next_attempt_ms, created_ms)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, value, ?, ?, ? FROM json_each(?) ORDER BY key`,
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
        delivery.messageId,
        nowMs,
        nowMs,
        JSON.stringify(targets),
      ],
    );
  }

  /**
   * Claims up to `limit` due rows for `leaseMs` in one statement (atomic on its own); a crashed claimer's
   * rows come due again when the lease expires.
   */
  claim(nowMs: number, limit: number, leaseMs: number): OutboxRow[] {
    const rows = this.#db.all<OutboxRow>(
      `UPDATE notification_outbox SET next_attempt_ms = :lease, lease_until_ms = :lease
        WHERE id IN (SELECT id FROM notification_outbox WHERE next_attempt_ms <= :now ORDER BY next_attempt_ms, id LIMIT :limit)
        RETURNING id, account_id, kind, event_id, event_ms, policy_id, policy_name, alert_type, description, mechanism_type,
                  target, message_id, '' AS payload, attempts, created_ms`,
      { now: nowMs, lease: nowMs + leaseMs, limit },
    );
    const ids = [...new Set(rows.map((row) => row.message_id).filter((id) => id !== null))];
    if (ids.length === 0) return rows;
    const bodies = new Map(
      this.#db
        .all<{ id: number; body: string }>(
          'SELECT id, body FROM notification_messages WHERE id IN (SELECT value FROM json_each(?))',
          [JSON.stringify(ids)],
        )
        .map((message) => [message.id, message.body]),
    );
    for (const row of rows) if (row.message_id !== null) row.payload = bodies.get(row.message_id) ?? '';
    return rows;
  }

  /**
   * At start, rows leased by a previous process (killed mid-send) are due again at once: a single server
   * owns its outbox, so nobody else can be sending them. Returns how many were released.
   */
  releaseLeases(nowMs: number): number {
    return this.#db.run(
      'UPDATE notification_outbox SET next_attempt_ms = ?, lease_until_ms = 0 WHERE lease_until_ms > 0',
      [nowMs],
    ).changes;
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
    return (
      this.#db.get<{ due: number | null }>('SELECT MIN(next_attempt_ms) AS due FROM notification_outbox')?.due ??
      undefined
    );
  }

  pendingCount(accountId?: string): number {
    const row = accountId
      ? this.#db.get<{ n: number }>('SELECT COUNT(*) AS n FROM notification_outbox WHERE account_id = ?', [accountId])
      : this.#db.get<{ n: number }>('SELECT COUNT(*) AS n FROM notification_outbox');
    return row?.n ?? 0;
  }
}
