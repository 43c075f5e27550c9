import { isUniqueViolation, type SqlDatabase } from '../db/index.ts';
import { D1Errors } from './errors.ts';
import type { D1DatabaseRecord } from './schemas.ts';

const COLUMNS = 'uuid, account_id, name, jurisdiction, primary_location_hint, created_at';

/** The records of D1 databases, in either dialect. */
export class SqlD1Store {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async insert(record: D1DatabaseRecord): Promise<void> {
    try {
      await this.#db.run(`INSERT INTO d1_databases (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`, [
        record.uuid,
        record.account_id,
        record.name,
        record.jurisdiction,
        record.primary_location_hint,
        record.created_at,
      ]);
    } catch (error) {
      // Two creations of one name that both passed the service's check: the loser still gets a 7502.
      if (
        isUniqueViolation(error, {
          sqliteColumns: 'd1_databases.account_id, d1_databases.name',
          postgresConstraint: 'd1_databases_account_id_name_key',
        })
      )
        throw D1Errors.duplicateName(record.name);
      throw error;
    }
  }

  /** By id or by name, within one account only. */
  async find(accountId: string, idOrName: string): Promise<D1DatabaseRecord | undefined> {
    return this.#db.get<D1DatabaseRecord>(
      `SELECT ${COLUMNS} FROM d1_databases WHERE account_id = ? AND (uuid = ? OR name = ?)`,
      [accountId, idOrName.toLowerCase(), idOrName],
    );
  }

  async count(accountId: string): Promise<number> {
    const row = await this.#db.get<{ n: number | string }>(
      'SELECT COUNT(*) AS n FROM d1_databases WHERE account_id = ?',
      [accountId],
    );
    return Number(row?.n ?? 0);
  }

  async list(
    accountId: string,
    query: { name?: string | undefined; offset: number; limit: number },
  ): Promise<{ databases: D1DatabaseRecord[]; total: number }> {
    const where = query.name !== undefined ? 'account_id = ? AND name = ?' : 'account_id = ?';
    const params = query.name !== undefined ? [accountId, query.name] : [accountId];
    const total = await this.#db.get<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM d1_databases WHERE ${where}`,
      params,
    );
    const databases = await this.#db.all<D1DatabaseRecord>(
      `SELECT ${COLUMNS} FROM d1_databases WHERE ${where} ORDER BY created_at, uuid LIMIT ? OFFSET ?`,
      [...params, query.limit, query.offset],
    );
    return { databases, total: Number(total?.n ?? 0) };
  }

  async delete(accountId: string, uuid: string): Promise<boolean> {
    return (
      (await this.#db.run('DELETE FROM d1_databases WHERE account_id = ? AND uuid = ?', [accountId, uuid])).changes > 0
    );
  }

  /** The accounts that have at least one database. */
  async accounts(): Promise<string[]> {
    const rows = await this.#db.all<{ account_id: string }>('SELECT DISTINCT account_id FROM d1_databases');
    return rows.map((row) => row.account_id);
  }
}
