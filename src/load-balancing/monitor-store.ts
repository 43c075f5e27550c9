import { dialects, isForeignKeyViolation, type SqlDatabase } from '../db/index.ts';
import { LbErrors } from './errors.ts';
import type { Monitor } from './monitor-schemas.ts';

/** Persistence of monitors (see SqlMonitorStore). */
export interface MonitorStore {
  list(accountId: string): Promise<Monitor[]>;
  get(accountId: string, id: string): Promise<Monitor | undefined>;
  /** Every monitor by id, across accounts (the health checker's plan). */
  getMany(ids: readonly string[]): Promise<Map<string, Monitor>>;
  insert(accountId: string, monitor: Monitor): Promise<void>;
  update(accountId: string, monitor: Monitor): Promise<void>;
  delete(accountId: string, id: string): Promise<boolean>;
}

interface MonitorRow {
  id: string;
  data: string;
}

const parse = (row: { data: string }): Monitor => JSON.parse(row.data) as Monitor;

/** Monitors in `lb_monitors` (the API representation as JSON), on either dialect. */
export class SqlMonitorStore implements MonitorStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async list(accountId: string): Promise<Monitor[]> {
    const rows = await this.#db.all<MonitorRow>(
      'SELECT data FROM lb_monitors WHERE account_id = ? ORDER BY created_on, id',
      [accountId],
    );
    return rows.map(parse);
  }

  async get(accountId: string, id: string): Promise<Monitor | undefined> {
    const row = await this.#db.get<MonitorRow>('SELECT data FROM lb_monitors WHERE account_id = ? AND id = ?', [
      accountId,
      id,
    ]);
    return row ? parse(row) : undefined;
  }

  async getMany(ids: readonly string[]): Promise<Map<string, Monitor>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const rows = await this.#db.all<MonitorRow>(
      `SELECT id, data FROM lb_monitors WHERE ${dialects[this.#db.dialect].inJsonArray('id', 'text')}`,
      [JSON.stringify(unique)],
    );
    return new Map(rows.map((row) => [row.id, parse(row)]));
  }

  async insert(accountId: string, monitor: Monitor): Promise<void> {
    await this.#db.run(
      'INSERT INTO lb_monitors (id, account_id, data, created_on, modified_on) VALUES (?, ?, ?, ?, ?)',
      [monitor.id, accountId, JSON.stringify(monitor), monitor.created_on, monitor.modified_on],
    );
  }

  async update(accountId: string, monitor: Monitor): Promise<void> {
    await this.#db.run('UPDATE lb_monitors SET data = ?, modified_on = ? WHERE account_id = ? AND id = ?', [
      JSON.stringify(monitor),
      monitor.modified_on,
      accountId,
      monitor.id,
    ]);
  }

  /** A pool that started using the monitor after the service's check still stops the delete (a 400, not a 500). */
  async delete(accountId: string, id: string): Promise<boolean> {
    try {
      const result = await this.#db.run('DELETE FROM lb_monitors WHERE account_id = ? AND id = ?', [accountId, id]);
      return result.changes > 0;
    } catch (error) {
      if (isForeignKeyViolation(error)) throw LbErrors.stillReferenced(`Monitor ${id}`, 'a pool');
      throw error;
    }
  }
}
