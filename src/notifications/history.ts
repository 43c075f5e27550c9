import type { Database } from '../db/index.ts';
import { randomUUID } from 'node:crypto';
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
    attempt: {
      status: HistoryItem['status'];
      error: string | null;
      mechanism: string;
      messageId: number | null;
      at: string;
    },
  ): void {
    this.#db.run(
      `INSERT INTO notification_history (id, account_id, outbox_id, attempt, status, error, policy_id, name, alert_type,
         description, mechanism, mechanism_type, message_id, sent)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
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
      ],
    );
  }

  /** Newest first; `since`/`before` bound `sent` (inclusive/exclusive). */
  async list(accountId: string, query: HistoryQuery): Promise<{ items: HistoryItem[]; total: number }> {
    const where = ['h.account_id = ?'];
    const params: string[] = [accountId];
    if (query.since) {
      where.push('h.sent >= ?');
      params.push(new Date(query.since).toISOString());
    }
    if (query.before) {
      where.push('h.sent < ?');
      params.push(new Date(query.before).toISOString());
    }
    const clause = where.join(' AND ');
    const total =
      this.#db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM notification_history h WHERE ${clause}`, params)?.n ?? 0;
    const rows = this.#db.all<HistoryItem & { body: string | null }>(
      `SELECT h.id, h.alert_type, h.description, h.mechanism, h.mechanism_type, h.name, h.policy_id, h.sent, h.status,
              h.attempt, h.error, m.body
         FROM notification_history h LEFT JOIN notification_messages m ON m.id = h.message_id
        WHERE ${clause} ORDER BY h.sent DESC, h.seq DESC LIMIT ? OFFSET ?`,
      [...params, query.limit, query.offset],
    );
    const items = rows.map(({ body, ...item }) => ({ ...item, alert_body: alertBody(item.mechanism_type, body) }));
    return { items, total };
  }
}

/** History shows what was sent: the webhook JSON as is, a mail's text. */
function alertBody(mechanismType: string, body: string | null): string {
  if (body === null) return '';
  return mechanismType === 'email' ? (JSON.parse(body) as { text: string }).text : body;
}
