import type { Database } from '../db/index.ts';
import { newId } from '../shared/ids.ts';
import type { OutboxRow } from './outbox.ts';

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
  status: 'delivered' | 'failed' | 'retrying' | 'skipped';
  attempt: number;
  error: string | null;
}

export interface HistoryQuery {
  since?: string | undefined;
  before?: string | undefined;
  offset: number;
  limit: number;
}

/** Every delivery attempt, kept for `GET /history`. */
export class DeliveryHistory {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Synchronous: the dispatcher records a batch of attempts in one transaction. */
  record(
    row: OutboxRow,
    attempt: { status: HistoryItem['status']; error: string | null; mechanism: string; body: string; at: string },
  ): void {
    this.#db.run(
      `INSERT INTO notification_history (id, account_id, outbox_id, attempt, status, error, policy_id, name, alert_type,
         description, mechanism, mechanism_type, alert_body, sent)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        newId(),
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
        attempt.body,
        attempt.at,
      ],
    );
  }

  /** Newest first; `since`/`before` bound `sent` (inclusive/exclusive). */
  async list(accountId: string, query: HistoryQuery): Promise<{ items: HistoryItem[]; total: number }> {
    const where = ['account_id = ?'];
    const params: string[] = [accountId];
    if (query.since) {
      where.push('sent >= ?');
      params.push(new Date(query.since).toISOString());
    }
    if (query.before) {
      where.push('sent < ?');
      params.push(new Date(query.before).toISOString());
    }
    const clause = where.join(' AND ');
    const total = this.#db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM notification_history WHERE ${clause}`, params)?.n ?? 0;
    const items = this.#db.all<HistoryItem>(
      `SELECT id, alert_body, alert_type, description, mechanism, mechanism_type, name, policy_id, sent, status, attempt, error
         FROM notification_history WHERE ${clause} ORDER BY sent DESC, seq DESC LIMIT ? OFFSET ?`,
      [...params, query.limit, query.offset],
    );
    return { items, total };
  }
}
