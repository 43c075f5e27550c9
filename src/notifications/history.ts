import type { SqlDatabase, SqlExecutor, SqlValue } from '../db/index.ts';
import { randomUUID } from 'node:crypto';
import type { OutboxRow } from './outbox.ts';
import type { Clock } from '../shared/clock.ts';

export interface HistoryItem {
  id: string;
  alert_body: string;
  alert_type: string;
  description: string;
  mechanism: string;
  mechanism_type: string;
  name: string;
  policy_id: string | null;
  sent: string;
  /** Ledge additions: the outcome of this attempt, which attempt it was, and why it failed. */
  status: 'delivered' | 'failed' | 'retrying' | 'skipped' | 'silenced';
  attempt: number;
  error: string | null;
}

export interface HistoryQuery {
  since?: string | undefined;
  before?: string | undefined;
  offset: number;
  limit: number;
}

/** What one delivery attempt records next to its outbox row. */
export interface HistoryAttempt {
  status: HistoryItem['status'];
  error: string | null;
  mechanism: string;
  messageId: number | null;
  at: string;
}

/** 14 parameters a row: 200 rows stay far below both dialects' parameter limits. */
const HISTORY_ROWS_PER_INSERT = 200;
const HISTORY_ROW_PLACEHOLDERS = `(${Array.from({ length: 14 }, () => '?').join(', ')})`;

/** Cloudflare shows 30 days of history on most plans (90 on Enterprise); LEDGE_NOTIFY_HISTORY_DAYS changes it. */
export const DEFAULT_HISTORY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Every delivery attempt, kept for `GET /history` during the retention (see retention.ts for the pruning),
 * on either dialect. Attempts are ordered by `seq` (an identity column on PostgreSQL), their insertion order.
 */
export class DeliveryHistory {
  readonly #db: SqlDatabase;
  readonly retentionMs: number;

  readonly #clock: Clock;

  constructor(db: SqlDatabase, retentionMs = DEFAULT_HISTORY_RETENTION_MS, clock: Clock) {
    this.#clock = clock;
    this.#db = db;
    this.retentionMs = retentionMs;
  }

  /** One attempt, in the caller's transaction. */
  async record(tx: SqlExecutor, row: OutboxRow, attempt: HistoryAttempt): Promise<void> {
    await this.recordAll(tx, [{ row, attempt }]);
  }

  /**
   * A batch of attempts in the dispatcher's transaction, in order, with one multi-row INSERT per
   * HISTORY_ROWS_PER_INSERT: on PostgreSQL every statement is a round trip, and 10,000 deliveries/s as
   * single-row INSERTs spend the time in the network, not the database.
   */
  async recordAll(tx: SqlExecutor, entries: readonly { row: OutboxRow; attempt: HistoryAttempt }[]): Promise<void> {
    for (let start = 0; start < entries.length; start += HISTORY_ROWS_PER_INSERT) {
      const chunk = entries.slice(start, start + HISTORY_ROWS_PER_INSERT);
      const values: SqlValue[] = [];
      for (const { row, attempt } of chunk) {
        values.push(
          // 32 hex like other ids; randomUUID draws from a cached entropy pool (one id per attempt adds up).
          randomUUID().replaceAll('-', ''),
          row.account_id,
          row.id,
          row.attempts + 1,
          attempt.status,
          attempt.error,
          row.policy_id,
          row.policy_name,
          row.alert_type,
          row.description,
          attempt.mechanism,
          row.mechanism_type,
          attempt.messageId,
          attempt.at,
        );
      }
      await tx.run(
        `INSERT INTO notification_history (id, account_id, outbox_id, attempt, status, error, policy_id, name, alert_type,
           description, mechanism, mechanism_type, message_id, sent)
         VALUES ${chunk.map(() => HISTORY_ROW_PLACEHOLDERS).join(', ')}`,
        values,
      );
    }
  }

  /**
   * Newest first; `since`/`before` bound `sent` (inclusive/exclusive). Nothing older than the retention is
   * shown, whether or not it has been pruned yet.
   */
  async list(accountId: string, query: HistoryQuery): Promise<{ items: HistoryItem[]; total: number }> {
    const where = ['h.account_id = ?', 'h.sent >= ?'];
    const oldest = this.#clock.now() - this.retentionMs;
    const since = query.since ? Math.max(Date.parse(query.since), oldest) : oldest;
    const params: string[] = [accountId, new Date(since).toISOString()];
    if (query.before) {
      where.push('h.sent < ?');
      params.push(new Date(query.before).toISOString());
    }
    const clause = where.join(' AND ');
    const count = await this.#db.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM notification_history h WHERE ${clause}`,
      params,
    );
    const total = count?.n ?? 0;
    // The page's rows are found in the index alone (account_id, sent, seq), then only those rows are read: with a
    // plain OFFSET the database reads every skipped row (and its message) to throw it away, which took a deep page
    // of 100,000 rows past 150 ms (bench/dashboard). The API is page-numbered, as Cloudflare's is, so the skip stays;
    // it is now a walk over index entries only.
    const rows = await this.#db.all<HistoryItem & { body: string | null }>(
      `SELECT h.id, h.alert_type, h.description, h.mechanism, h.mechanism_type, h.name, h.policy_id, h.sent, h.status,
              h.attempt, h.error, m.body
         FROM (SELECT h.seq FROM notification_history h WHERE ${clause}
                ORDER BY h.sent DESC, h.seq DESC LIMIT ? OFFSET ?) page
         JOIN notification_history h ON h.seq = page.seq
         LEFT JOIN notification_messages m ON m.id = h.message_id
        ORDER BY h.sent DESC, h.seq DESC`,
      [...params, query.limit, query.offset],
    );
    const items = rows.map(({ body, ...item }) => ({ ...item, alert_body: alertBody(item.mechanism_type, body) }));
    return { items, total };
  }

  /**
   * Attempts per hour since `since` (bounded by the retention), by outcome: the dashboard's deliveries chart. One
   * statement with a range count per hour over the index (account_id, sent, status): each hour is an index seek and a
   * short walk. A single GROUP BY over the hour of `sent` reads the same entries but sorts them all into a temporary
   * b-tree, which measured 10 times slower at 100,000 attempts in a week (SQLite, same run).
   */
  async hourly(
    accountId: string,
    since: string | undefined,
  ): Promise<{ hour: string; delivered: number; failed: number; other: number }[]> {
    const HOUR = 3_600_000;
    const oldest = this.#clock.now() - this.retentionMs;
    const from = since ? Math.max(Date.parse(since), oldest) : oldest;
    const hours: string[] = [];
    for (let t = Math.floor(from / HOUR) * HOUR; t <= this.#clock.now(); t += HOUR)
      hours.push(new Date(t).toISOString());
    const bounds = hours.map((hour, i) => [i === 0 ? new Date(from).toISOString() : hour, nextHour(hour)]);
    const count = (status: string) =>
      `(SELECT COUNT(*) FROM notification_history h WHERE h.account_id = ? AND h.sent >= b.s AND h.sent < b.e${status})`;
    const rows = await this.#db.all<{ s: string; total: number; delivered: number; failed: number }>(
      `WITH b(s, e) AS (VALUES ${bounds.map(() => '(CAST(? AS TEXT), CAST(? AS TEXT))').join(', ')})
       SELECT b.s AS s, ${count('')} AS total, ${count(" AND h.status = 'delivered'")} AS delivered,
              ${count(" AND h.status IN ('failed', 'retrying')")} AS failed
         FROM b ORDER BY b.s`,
      [...bounds.flat(), accountId, accountId, accountId],
    );
    return rows
      .filter((row) => Number(row.total) > 0)
      .map((row) => {
        const delivered = Number(row.delivered);
        const failed = Number(row.failed);
        const hour = `${row.s.slice(0, 13)}:00:00.000Z`;
        return { hour, delivered, failed, other: Number(row.total) - delivered - failed };
      });
  }

  /**
   * Deletes up to `limit` of the oldest attempts sent before `cutoff`, then the stored bodies that neither a
   * remaining attempt nor a pending delivery refers to, in one transaction. Attempts are appended as they
   * happen, so the oldest by insertion order are the oldest by time: no index on `sent` is needed.
   * Returns how many attempts went (0: nothing older than the cutoff is left).
   */
  pruneBatch(cutoff: string, limit: number): Promise<{ attempts: number; bodies: number }> {
    return this.#db.transaction(async (tx) => {
      const oldest = await tx.get<{ sent: string }>('SELECT sent FROM notification_history ORDER BY seq LIMIT 1');
      if (!oldest || oldest.sent >= cutoff) return { attempts: 0, bodies: 0 };
      const gone = await tx.all<{ message_id: number | null }>(
        `DELETE FROM notification_history
          WHERE seq IN (SELECT seq FROM notification_history ORDER BY seq LIMIT ?) AND sent < ?
          RETURNING message_id`,
        [limit, cutoff],
      );
      // Pending deliveries are few (the outbox holds only what is not delivered yet), so one read of their
      // references per batch is cheaper than an index that every delivery would pay for.
      const pendingRows = await tx.all<{ message_id: number }>(
        'SELECT DISTINCT message_id FROM notification_outbox WHERE message_id IS NOT NULL',
      );
      const pending = new Set(pendingRows.map((row) => row.message_id));
      let bodies = 0;
      for (const id of new Set(gone.map((row) => row.message_id))) {
        if (id === null || pending.has(id)) continue;
        const result = await tx.run(
          `DELETE FROM notification_messages WHERE id = ?
             AND NOT EXISTS (SELECT 1 FROM notification_history WHERE message_id = ?)`,
          [id, id],
        );
        bodies += result.changes;
      }
      return { attempts: gone.length, bodies };
    });
  }
}

/** History shows what was sent: the webhook JSON as is, a mail's text. */
function alertBody(mechanismType: string, body: string | null): string {
  if (body === null) return '';
  return mechanismType === 'email' ? (JSON.parse(body) as { text: string }).text : body;
}

function nextHour(hourIso: string): string {
  return new Date(Date.parse(hourIso) + 3_600_000).toISOString();
}
