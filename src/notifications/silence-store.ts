import type { SqlExecutor } from '../db/index.ts';

/** One alert silence: a policy's alerts whose time is in [start_ms, end_ms) are not delivered. */
export interface Silence {
  id: string;
  account_id: string;
  policy_id: string;
  start_ms: number;
  end_ms: number;
  created_at: string;
  updated_at: string;
}

interface SilenceRow extends Omit<Silence, 'start_ms' | 'end_ms'> {
  start_ms: number | bigint | string;
  end_ms: number | bigint | string;
}

const toSilence = (row: SilenceRow): Silence => ({
  ...row,
  start_ms: Number(row.start_ms),
  end_ms: Number(row.end_ms),
});

/** Persistence of alert silences (SQLite or PostgreSQL); writes take the caller's executor (a transaction). */
export class SqlSilenceStore {
  readonly #db: SqlExecutor;

  constructor(db: SqlExecutor) {
    this.#db = db;
  }

  async insert(silence: Silence, db: SqlExecutor = this.#db): Promise<void> {
    await db.run(
      `INSERT INTO notification_silences (id, account_id, policy_id, start_ms, end_ms, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      [
        silence.id,
        silence.account_id,
        silence.policy_id,
        silence.start_ms,
        silence.end_ms,
        silence.created_at,
        silence.updated_at,
      ],
    );
  }

  /** False when the account has no such silence. */
  async update(
    accountId: string,
    id: string,
    window: { start_ms: number; end_ms: number; updated_at: string },
    db: SqlExecutor = this.#db,
  ): Promise<boolean> {
    const result = await db.run(
      'UPDATE notification_silences SET start_ms = ?, end_ms = ?, updated_at = ? WHERE account_id = ? AND id = ?',
      [window.start_ms, window.end_ms, window.updated_at, accountId, id],
    );
    return result.changes > 0;
  }

  async get(accountId: string, id: string, db: SqlExecutor = this.#db): Promise<Silence | undefined> {
    const row = await db.get<SilenceRow>('SELECT * FROM notification_silences WHERE account_id = ? AND id = ?', [
      accountId,
      id,
    ]);
    return row && toSilence(row);
  }

  /** The account's silences, earliest start first. */
  async list(accountId: string): Promise<Silence[]> {
    const rows = await this.#db.all<SilenceRow>(
      'SELECT * FROM notification_silences WHERE account_id = ? ORDER BY start_ms, id',
      [accountId],
    );
    return rows.map(toSilence);
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const result = await this.#db.run('DELETE FROM notification_silences WHERE account_id = ? AND id = ?', [
      accountId,
      id,
    ]);
    return result.changes > 0;
  }

  /** Every silence not over at `nowMs`, of all accounts (the dispatcher's cache). */
  async notOverAt(nowMs: number): Promise<Silence[]> {
    const rows = await this.#db.all<SilenceRow>('SELECT * FROM notification_silences WHERE end_ms > ?', [nowMs]);
    return rows.map(toSilence);
  }
}
