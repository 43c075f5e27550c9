import { isUniqueViolation, type SqlDatabase } from '../db/index.ts';
import { KvErrors } from './errors.ts';

export interface KvNamespaceRecord {
  id: string;
  account_id: string;
  title: string;
  created_at: number;
}

export interface NamespacePage {
  offset: number;
  limit: number;
  order: 'id' | 'title';
  direction: 'asc' | 'desc';
}

const COLUMNS = 'id, account_id, title, created_at';

/** The namespaces table, on either database (src/db/sql.ts). */
export class SqlKvNamespaceStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async insert(record: KvNamespaceRecord): Promise<void> {
    try {
      await this.#db.run(`INSERT INTO kv_namespaces (${COLUMNS}) VALUES (?, ?, ?, ?)`, [
        record.id,
        record.account_id,
        record.title,
        record.created_at,
      ]);
    } catch (error) {
      // Two creations of one title that both passed the service's check: the loser still gets a 10014.
      if (isUniqueViolation(error)) throw KvErrors.namespaceExists(record.title);
      throw error;
    }
  }

  get(accountId: string, id: string): Promise<KvNamespaceRecord | undefined> {
    return this.#db.get<KvNamespaceRecord>(`SELECT ${COLUMNS} FROM kv_namespaces WHERE account_id = ? AND id = ?`, [
      accountId,
      id,
    ]);
  }

  byTitle(accountId: string, title: string): Promise<KvNamespaceRecord | undefined> {
    return this.#db.get<KvNamespaceRecord>(`SELECT ${COLUMNS} FROM kv_namespaces WHERE account_id = ? AND title = ?`, [
      accountId,
      title,
    ]);
  }

  async count(accountId: string): Promise<number> {
    const row = await this.#db.get<{ n: number | string }>(
      'SELECT COUNT(*) AS n FROM kv_namespaces WHERE account_id = ?',
      [accountId],
    );
    return Number(row?.n ?? 0);
  }

  list(accountId: string, page: NamespacePage): Promise<KvNamespaceRecord[]> {
    // order and direction come from a fixed set (the route's schema), never from the client's text.
    const order = page.order === 'title' ? 'title' : 'id';
    const direction = page.direction === 'desc' ? 'DESC' : 'ASC';
    return this.#db.all<KvNamespaceRecord>(
      `SELECT ${COLUMNS} FROM kv_namespaces WHERE account_id = ? ORDER BY ${order} ${direction}, id ${direction} LIMIT ? OFFSET ?`,
      [accountId, page.limit, page.offset],
    );
  }

  async rename(accountId: string, id: string, title: string): Promise<boolean> {
    try {
      const result = await this.#db.run('UPDATE kv_namespaces SET title = ? WHERE account_id = ? AND id = ?', [
        title,
        accountId,
        id,
      ]);
      return result.changes > 0;
    } catch (error) {
      if (isUniqueViolation(error)) throw KvErrors.namespaceExists(title);
      throw error;
    }
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return (
      (await this.#db.run('DELETE FROM kv_namespaces WHERE account_id = ? AND id = ?', [accountId, id])).changes > 0
    );
  }

  /** Every account that has a namespace: their engines start with the server. */
  async accounts(): Promise<string[]> {
    const rows = await this.#db.all<{ account_id: string }>('SELECT DISTINCT account_id FROM kv_namespaces');
    return rows.map((row) => row.account_id);
  }
}
