import type { Database } from '../db/index.ts';
import type { Monitor } from './monitor-schemas.ts';

/** Persistence of monitors. Async so that another backend can replace the SQLite one. */
export interface MonitorStore {
  list(accountId: string): Promise<Monitor[]>;
  get(accountId: string, id: string): Promise<Monitor | undefined>;
  /** Every monitor by id, across accounts (the health checker's plan). */
  getMany(ids: readonly string[]): Promise<Map<string, Monitor>>;
  insert(accountId: string, monitor: Monitor): Promise<void>;
  update(accountId: string, monitor: Monitor): Promise<void>;
  delete(accountId: string, id: string): Promise<boolean>;
}

export class SqliteMonitorStore implements MonitorStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async list(accountId: string): Promise<Monitor[]> {
    return this.#db
      .all<{ data: string }>('SELECT data FROM lb_monitors WHERE account_id = ? ORDER BY created_on, id', [accountId])
      .map((row) => JSON.parse(row.data) as Monitor);
  }

  async get(accountId: string, id: string): Promise<Monitor | undefined> {
    const row = this.#db.get<{ data: string }>('SELECT data FROM lb_monitors WHERE account_id = ? AND id = ?', [
      accountId,
      id,
    ]);
    return row ? (JSON.parse(row.data) as Monitor) : undefined;
  }

  async getMany(ids: readonly string[]): Promise<Map<string, Monitor>> {
    const found = new Map<string, Monitor>();
    for (const id of new Set(ids)) {
      const row = this.#db.get<{ data: string }>('SELECT data FROM lb_monitors WHERE id = ?', [id]);
      if (row) found.set(id, JSON.parse(row.data) as Monitor);
    }
    return found;
  }

  async insert(accountId: string, monitor: Monitor): Promise<void> {
    this.#db.run('INSERT INTO lb_monitors (id, account_id, data, created_on, modified_on) VALUES (?, ?, ?, ?, ?)', [
      monitor.id,
      accountId,
      JSON.stringify(monitor),
      monitor.created_on,
      monitor.modified_on,
    ]);
  }

  async update(accountId: string, monitor: Monitor): Promise<void> {
    this.#db.run('UPDATE lb_monitors SET data = ?, modified_on = ? WHERE account_id = ? AND id = ?', [
      JSON.stringify(monitor),
      monitor.modified_on,
      accountId,
      monitor.id,
    ]);
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return this.#db.run('DELETE FROM lb_monitors WHERE account_id = ? AND id = ?', [accountId, id]).changes > 0;
  }
}
