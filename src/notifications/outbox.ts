import {
  dialects,
  type SqlDatabase,
  type SqlExecutor,
  type SqlTransaction,
  type TransactionScope,
} from '../db/index.ts';
import { FreshRows } from './fresh-rows.ts';
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
 * The durable delivery queue, on either dialect. Writers append inside their own transaction; claimers take
 * due rows by pushing `next_attempt_ms` to a lease deadline (so one index serves both "due" and "not
 * claimed"), skipping rows another claimer holds (`FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite has one
 * writer), and remove a row once it is delivered or given up. History keeps the record of every attempt.
 * A claimed row comes due again only when its lease has run out.
 *
 * While this process's dispatcher runs (handOffTo), new rows are written already leased to it and handed
 * over in memory once their transaction has committed (takeFresh, fed by the scope's after-commit
 * callback): no claim UPDATE and no read-back per row. They stay in the table until their outcome is
 * recorded, and a start releases this owner's leases, so rows pending at a crash are still sent after the
 * restart.
 */
export class Outbox {
  readonly #db: SqlDatabase;
  readonly #fresh = new FreshRows();
  /** Who holds the leases this process takes (one id per node; '' for a single node). */
  readonly #owner: string;
  #leaseMs: number | undefined;
  /** Bumped by handOffTo: a transaction that commits after the hand-off changed does not hand its rows over. */
  #handOff = 0;

  constructor(db: SqlDatabase, options: { owner?: string } = {}) {
    this.#db = db;
    this.#owner = options.owner ?? '';
  }

  /** Stores a message body once for all the deliveries (and history rows) of one alert; returns its id. */
  async saveMessage(tx: SqlExecutor, body: string): Promise<number> {
    const row = await tx.get<{ id: number }>('INSERT INTO notification_messages (body) VALUES (?) RETURNING id', [
      body,
    ]);
    return row!.id;
  }

  /**
   * From now on (leaseMs set) new rows are leased at once and kept in memory for takeFresh; undefined
   * stops that (rows already handed over in memory stay leased until the next start releases them).
   */
  handOffTo(leaseMs: number | undefined): void {
    this.#leaseMs = leaseMs;
    this.#handOff++;
    this.#fresh.clear();
  }

  /**
   * Appends one row per target, all sharing everything else, in one statement (an alert fanned out to many
   * webhooks is one insert), in the transaction of `scope` (the health event's).
   */
  async append(
    scope: TransactionScope,
    delivery: Omit<NewDelivery, 'target'>,
    targets: readonly string[],
    nowMs: number,
  ): Promise<void> {
    if (targets.length === 0) return;
    const { tx } = scope;
    const lease = this.#leaseMs === undefined ? 0 : nowMs + this.#leaseMs;
    // The API request that set this off (x-request-id), passed on to the webhook and the delivery log line.
    const requestId = currentRequestId() ?? null;
    // Integers are cast: PostgreSQL types the parameters of a SELECT list as text otherwise.
    const rows = await tx.all<{ id: number; target: string }>(
      `INSERT INTO notification_outbox (account_id, kind, event_id, event_ms, policy_id, policy_name, alert_type, description,
         mechanism_type, target, message_id, next_attempt_ms, lease_until_ms, lease_owner, created_ms, request_id)
       SELECT ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT), ?, ?, ?, ?, ?, value, CAST(? AS BIGINT), CAST(? AS BIGINT),
              CAST(? AS BIGINT), ?, CAST(? AS BIGINT), ?
         FROM ${dialects[tx.dialect].jsonArrayRows} ORDER BY key
       RETURNING id, target`,
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
        this.#owner,
        nowMs,
        requestId,
        JSON.stringify(targets),
      ],
    );
    if (lease === 0) return;
    const handOff = this.#handOff;
    // Rows of a transaction that rolls back never reach the dispatcher.
    scope.afterCommit(() => {
      if (handOff === this.#handOff) this.#fresh.add({ rows, delivery, createdMs: nowMs, requestId, next: 0 });
    });
  }

  /** How many committed rows wait to be handed over in memory. */
  get freshWaiting(): number {
    return this.#fresh.size;
  }

  /**
   * Up to `max` rows appended since handOffTo whose transaction committed. Rows waiting longer than half a
   * lease go back to the table instead (due at once), so that their lease cannot expire while they wait
   * here; `released` says whether any did.
   */
  async takeFresh(max: number, nowMs: number): Promise<{ rows: OutboxRow[]; released: boolean }> {
    if (this.#fresh.size === 0 || this.#leaseMs === undefined) return { rows: [], released: false };
    const stale = this.#fresh.takeOlderThan(nowMs - this.#leaseMs / 2);
    const rows = max > 0 ? this.#fresh.take(max) : [];
    const ids = stale.flatMap((batch) => batch.rows.slice(batch.next).map((row) => row.id));
    if (ids.length > 0) {
      await this.#db.run(
        `UPDATE notification_outbox SET next_attempt_ms = ?, lease_until_ms = 0
          WHERE ${dialects[this.#db.dialect].inJsonArray('id', 'integer')}`,
        [nowMs, JSON.stringify(ids)],
      );
    }
    return { rows, released: ids.length > 0 };
  }

  /**
   * Claims up to `limit` due rows for `leaseMs` in one statement, skipping rows another claimer is taking;
   * a crashed claimer's rows come due again when the lease expires. `executor` is a transaction (an
   * UPDATE ... RETURNING is a write: on SQLite a lone `db.all` would run on the read-only connection).
   */
  async claim(executor: SqlTransaction, nowMs: number, limit: number, leaseMs: number): Promise<OutboxRow[]> {
    const dialect = dialects[executor.dialect];
    const rows = await executor.all<OutboxRow>(
      `UPDATE notification_outbox SET next_attempt_ms = ?, lease_until_ms = ?, lease_owner = ?
        WHERE id IN (SELECT id FROM notification_outbox WHERE next_attempt_ms <= ?
                      ORDER BY next_attempt_ms, id LIMIT ?${dialect.skipLocked})
        RETURNING id, account_id, kind, event_id, event_ms, policy_id, policy_name, alert_type, description, mechanism_type,
                  target, message_id, request_id, '' AS payload, attempts, created_ms`,
      [nowMs + leaseMs, nowMs + leaseMs, this.#owner, nowMs, limit],
    );
    const ids = [...new Set(rows.map((row) => row.message_id).filter((id) => id !== null))];
    if (ids.length === 0) return rows;
    const messages = await executor.all<{ id: number; body: string }>(
      `SELECT id, body FROM notification_messages WHERE ${dialect.inJsonArray('id', 'integer')}`,
      [JSON.stringify(ids)],
    );
    const bodies = new Map(messages.map((message) => [message.id, message.body]));
    for (const row of rows) if (row.message_id !== null) row.payload = bodies.get(row.message_id) ?? '';
    return rows;
  }

  /**
   * At start, rows this owner leased before (a process killed mid-send) are due again at once: nobody else
   * holds them. Other owners' leases run out on their own. Returns how many were released.
   */
  async releaseLeases(nowMs: number): Promise<number> {
    const result = await this.#db.run(
      'UPDATE notification_outbox SET next_attempt_ms = ?, lease_until_ms = 0 WHERE lease_until_ms > 0 AND lease_owner = ?',
      [nowMs, this.#owner],
    );
    return result.changes;
  }

  async removeAll(tx: SqlExecutor, ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await tx.run(`DELETE FROM notification_outbox WHERE ${dialects[tx.dialect].inJsonArray('id', 'integer')}`, [
      JSON.stringify(ids),
    ]);
  }

  async retryLater(tx: SqlExecutor, id: number, attempts: number, nextAttemptMs: number, error: string): Promise<void> {
    await tx.run(
      'UPDATE notification_outbox SET attempts = ?, next_attempt_ms = ?, lease_until_ms = 0, last_error = ? WHERE id = ?',
      [attempts, nextAttemptMs, error, id],
    );
  }

  /** When the next row comes due (claimed rows included, at their lease deadline), or undefined if empty. */
  async nextDueMs(executor: SqlExecutor = this.#db): Promise<number | undefined> {
    const row = await executor.get<{ due: number | null }>(
      'SELECT MIN(next_attempt_ms) AS due FROM notification_outbox',
    );
    return row?.due ?? undefined;
  }

  async pendingCount(accountId?: string): Promise<number> {
    const row = accountId
      ? await this.#db.get<{ n: number }>('SELECT COUNT(*) AS n FROM notification_outbox WHERE account_id = ?', [
          accountId,
        ])
      : await this.#db.get<{ n: number }>('SELECT COUNT(*) AS n FROM notification_outbox');
    return row?.n ?? 0;
  }
}
