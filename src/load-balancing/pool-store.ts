import type { Database } from '../db/index.ts';
import { LbErrors } from './errors.ts';
import type { Pool } from './pool-schemas.ts';

export interface PoolPage {
  pools: Pool[];
  total: number;
}

export interface PoolQuery {
  monitorId?: string | undefined;
  offset: number;
  limit: number;
}

/** Persistence of pools. Async so that another backend (PostgreSQL) can replace the SQLite one. */
export interface PoolStore {
  /** One page ordered by name then id, plus the total for `result_info`. */
  list(accountId: string, query: PoolQuery): Promise<PoolPage>;
  get(accountId: string, id: string): Promise<Pool | undefined>;
  /** Pools of the account that use a monitor (monitor references, previews). */
  listByMonitor(accountId: string, monitorId: string): Promise<Pool[]>;
  /** Every enabled pool that has a monitor, across accounts (the health checker's plan). */
  listMonitored(): Promise<{ accountId: string; pool: Pool }[]>;
  nameTaken(accountId: string, name: string, exceptId?: string): Promise<boolean>;
  insert(accountId: string, pool: Pool): Promise<void>;
  /**
   * Replaces the stored pool. `within` runs in the same transaction after the write, with the pool as it
   * was stored just before it (events that must commit with the change, see pool-events.ts).
   */
  update(accountId: string, pool: Pool, within?: (previous: Pool | undefined) => void): Promise<void>;
  /** Applies `change` to each pool of one page inside one transaction and returns the changed pools. */
  updatePage(accountId: string, query: PoolQuery, change: (pool: Pool) => Pool): Promise<PoolPage>;
  delete(accountId: string, id: string): Promise<boolean>;
  countWithLegacyEmail(accountId: string): Promise<number>;
}

interface PoolRow {
  data: string;
}

export class SqlitePoolStore implements PoolStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async list(accountId: string, query: PoolQuery): Promise<PoolPage> {
    return this.#page(accountId, query);
  }

  async get(accountId: string, id: string): Promise<Pool | undefined> {
    return this.#read(accountId, id);
  }

  #read(accountId: string, id: string): Pool | undefined {
    const row = this.#db.get<PoolRow>('SELECT data FROM lb_pools WHERE account_id = ? AND id = ?', [accountId, id]);
    return row ? (JSON.parse(row.data) as Pool) : undefined;
  }

  async listByMonitor(accountId: string, monitorId: string): Promise<Pool[]> {
    return this.#db
      .all<PoolRow>('SELECT data FROM lb_pools WHERE account_id = ? AND monitor_id = ? ORDER BY name, id', [
        accountId,
        monitorId,
      ])
      .map((row) => JSON.parse(row.data) as Pool);
  }

  async listMonitored(): Promise<{ accountId: string; pool: Pool }[]> {
    return this.#db
      .all<PoolRow & { account_id: string }>('SELECT account_id, data FROM lb_pools WHERE monitor_id IS NOT NULL')
      .map((row) => ({ accountId: row.account_id, pool: JSON.parse(row.data) as Pool }));
  }

  async nameTaken(accountId: string, name: string, exceptId = ''): Promise<boolean> {
    return (
      this.#db.get('SELECT 1 AS x FROM lb_pools WHERE account_id = ? AND name = ? AND id <> ?', [
        accountId,
        name,
        exceptId,
      ]) !== undefined
    );
  }

  async insert(accountId: string, pool: Pool): Promise<void> {
    constraintsAsErrors(pool, () =>
      this.#db.run(
        `INSERT INTO lb_pools (id, account_id, name, monitor_id, notification_email, data, created_on, modified_on)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          pool.id,
          accountId,
          pool.name,
          pool.monitor ?? null,
          pool.notification_email,
          JSON.stringify(pool),
          pool.created_on,
          pool.modified_on,
        ],
      ),
    );
  }

  async update(accountId: string, pool: Pool, within?: (previous: Pool | undefined) => void): Promise<void> {
    constraintsAsErrors(pool, () =>
      this.#db.transaction(() => {
        const previous = within ? this.#read(accountId, pool.id) : undefined;
        this.#write(accountId, pool);
        within?.(previous);
      }),
    );
  }

  async updatePage(accountId: string, query: PoolQuery, change: (pool: Pool) => Pool): Promise<PoolPage> {
    return this.#db.transaction(() => {
      const page = this.#page(accountId, query);
      const changed = page.pools.map(change);
      for (const pool of changed) this.#write(accountId, pool);
      return { pools: changed, total: page.total };
    });
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    try {
      return this.#db.run('DELETE FROM lb_pools WHERE account_id = ? AND id = ?', [accountId, id]).changes > 0;
    } catch (error) {
      // A load balancer started using the pool after the service checked its references.
      if ((error as Error).message.includes('FOREIGN KEY constraint failed'))
        throw LbErrors.stillReferenced(`Pool ${id}`, 'a load balancer');
      throw error;
    }
  }

  async countWithLegacyEmail(accountId: string): Promise<number> {
    return (
      this.#db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM lb_pools WHERE account_id = ? AND notification_email <> ''",
        [accountId],
      )?.n ?? 0
    );
  }

  #page(accountId: string, query: PoolQuery): PoolPage {
    const byMonitor = query.monitorId !== undefined;
    const where = byMonitor ? 'account_id = ? AND monitor_id = ?' : 'account_id = ?';
    const params = byMonitor ? [accountId, query.monitorId ?? ''] : [accountId];
    const total = this.#db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM lb_pools WHERE ${where}`, params)?.n ?? 0;
    const rows = this.#db.all<PoolRow>(`SELECT data FROM lb_pools WHERE ${where} ORDER BY name, id LIMIT ? OFFSET ?`, [
      ...params,
      query.limit,
      query.offset,
    ]);
    return { pools: rows.map((row) => JSON.parse(row.data) as Pool), total };
  }

  #write(accountId: string, pool: Pool): void {
    this.#db.run(
      `UPDATE lb_pools SET name = ?, monitor_id = ?, notification_email = ?, data = ?, modified_on = ?
       WHERE account_id = ? AND id = ?`,
      [
        pool.name,
        pool.monitor ?? null,
        pool.notification_email,
        JSON.stringify(pool),
        pool.modified_on,
        accountId,
        pool.id,
      ],
    );
  }
}

/**
 * The service checks names and monitors first; these constraints catch the race where two requests pass
 * those checks together (or a monitor is deleted in between), so the loser still gets a client error.
 */
function constraintsAsErrors(pool: Pool, write: () => unknown): void {
  try {
    write();
  } catch (error) {
    const message = (error as Error).message;
    if (message.includes('UNIQUE constraint failed: lb_pools.account_id, lb_pools.name'))
      throw LbErrors.duplicatePoolName(pool.name);
    if (message.includes('FOREIGN KEY constraint failed'))
      throw LbErrors.validation(`monitor: no monitor with id "${pool.monitor}" in this account`);
    throw error;
  }
}
