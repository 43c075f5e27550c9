import type { Database } from '../db/index.ts';
import { FreshRows, type FreshBatch } from './fresh-rows.ts';
import { currentRequestId } from '../shared/request-context.ts';

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
  /** The stored message's body ('' when the text is written at send time), handed on with fresh rows. */
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
  message_id: number | null;
  /** The API request that wrote the row (x-request-id), sent on with the delivery; null for health checks. */
  request_id: string | null;
  /** The message body (webhook JSON, or a JSON { subject, text } mail), loaded when the row is claimed. */
  payload: string;
  attempts: number;
  created_ms: number;
}

/**
 * The durable delivery queue. Writers append inside their own transaction; the dispatcher claims due rows
 * by pushing `next_attempt_ms` to a lease deadline (so one index serves both "due" and "not claimed"), and
 * removes a row once it is delivered or given up. History keeps the record of every attempt.
 *
 * While this process's dispatcher runs (handOffTo), new rows are written already leased to it and handed
 * over in memory once their transaction has committed (takeFresh): no claim UPDATE and no read-back per
 * row. They stay in the table until their outcome is recorded, and a start releases every lease, so rows
 * pending at a crash are still sent after the restart.
 */
export class Outbox {
  readonly #db: Database;
  readonly #fresh = new FreshRows();
  #leaseMs: number | undefined;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Stores a message body once for all the deliveries (and history rows) of one alert; returns its id. */
  saveMessage(body: string): number {
    return this.#db.run('INSERT INTO notification_messages (body) VALUES (?)', [body]).lastInsertRowid;
  }

  /**
   * From now on (leaseMs set) new rows are leased at once and kept in memory for takeFresh; undefined
   * stops that (rows already handed over in memory stay leased until the next start releases them).
   */
  handOffTo(leaseMs: number | undefined): void {
    this.#leaseMs = leaseMs;
    this.#fresh.clear();
  }

  /**
   * Appends one row per target, all sharing everything else, in one statement (an alert fanned out to many
   * webhooks is one insert). Synchronous: called from the health-event listener inside its transaction.
   */
  append(delivery: Omit<NewDelivery, 'target'>, targets: readonly string[], nowMs: number): void {
    if (targets.length === 0) return;
    const lease = this.#leaseMs === undefined ? 0 : nowMs + this.#leaseMs;
    const requestId = currentRequestId() ?? null;
    const result = this.#db.run(
      `INSERT INTO notification_outbox (account_id, kind, event_id, event_ms, policy_id, policy_name, alert_type, description,
         mechanism_type, target, message_id, next_attempt_ms, lease_until_ms, created_ms, request_id)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, value, ?, ?, ?, ?, ? FROM json_each(?) ORDER BY key`,
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
        lease === 0 ? nowMs : lease,
        lease,
        nowMs,
        requestId,
        JSON.stringify(targets),
      ],
    );
    // One statement allocates consecutive ids, in target order.
    if (lease !== 0 && result.changes === targets.length) {
      const lastId = result.lastInsertRowid;
      this.#fresh.add({
        firstId: lastId - targets.length + 1,
        lastId,
        delivery,
        targets,
        createdMs: nowMs,
        requestId,
        next: 0,
      });
    }
  }

  /** How many rows wait to be handed over in memory (some may belong to transactions that rolled back). */
  get freshWaiting(): number {
    return this.#fresh.size;
  }

  /**
   * Up to `max` rows appended since handOffTo whose transaction committed (rows of a rolled-back one are
   * dropped). Rows waiting longer than half a lease go back to the table instead (due at once), so that
   * their lease cannot expire while they wait here; `released` says whether any did.
   * Must be called outside any transaction, so that every append seen has committed or rolled back.
   */
  takeFresh(max: number, nowMs: number): { rows: OutboxRow[]; released: boolean } {
    if (this.#fresh.size === 0 || this.#leaseMs === undefined || this.#db.inTransaction)
      return { rows: [], released: false };
    this.#confirmFresh();
    let released = false;
    for (const batch of this.#fresh.takeOlderThan(nowMs - this.#leaseMs / 2)) {
      this.#db.run('UPDATE notification_outbox SET next_attempt_ms = ?, lease_until_ms = 0 WHERE id BETWEEN ? AND ?', [
        nowMs,
        batch.firstId + batch.next,
        batch.lastId,
      ]);
      released = true;
    }
    return { rows: max > 0 ? this.#fresh.take(max) : [], released };
  }

  /** One range count for all new batches; per batch only when that count shows that some rolled back. */
  #confirmFresh(): void {
    const batches = this.#fresh.unconfirmed();
    if (batches.length === 0) return;
    const count = (from: number, to: number) =>
      this.#db.get<{ n: number }>('SELECT COUNT(*) AS n FROM notification_outbox WHERE id BETWEEN ? AND ?', [from, to])
        ?.n ?? 0;
    const expected = batches.reduce((sum, batch) => sum + batch.lastId - batch.firstId + 1, 0);
    // Ids in the range all belong to queued batches (rolled-back ones whose ids were reused are already gone).
    if (count(batches[0]!.firstId, batches.at(-1)!.lastId) === expected) return this.#fresh.confirm();
    const missing = new Set<FreshBatch>(batches.filter((batch) => count(batch.firstId, batch.lastId) === 0));
    this.#fresh.confirm(missing);
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
                  target, message_id, request_id, '' AS payload, attempts, created_ms`,
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
