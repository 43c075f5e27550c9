import {
  dialects,
  inTransactionScope,
  isForeignKeyViolation,
  isUniqueViolation,
  type SqlDatabase,
  type SqlExecutor,
  type TransactionScope,
} from '../db/index.ts';
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

/** Persistence of pools (see SqlPoolStore). */
export interface PoolStore {
  /** One page ordered by name then id, plus the total for `result_info`. */
  list(accountId: string, query: PoolQuery): Promise<PoolPage>;
  get(accountId: string, id: string): Promise<Pool | undefined>;
  /** Pools of the account that use a monitor (monitor references, previews). */
  listByMonitor(accountId: string, monitorId: string): Promise<Pool[]>;
  /** Every enabled pool that has a monitor, across accounts (the health checker's plan). */
  listMonitored(): Promise<{ accountId: string; pool: Pool }[]>;
  nameTaken(accountId: string, name: string, exceptId?: string): Promise<boolean>;
  /** A taken name is `duplicatePoolName`, an unknown monitor a validation error (also when two creators race). */
  insert(accountId: string, pool: Pool): Promise<void>;
  /**
   * Replaces the stored pool. `within` runs in the same transaction after the write, with the pool as it
   * was stored just before it (read under a row lock: two concurrent edits see each other's result) and
   * the transaction's scope (events that must commit with the change, see pool-events.ts).
   */
  update(
    accountId: string,
    pool: Pool,
    within?: (previous: Pool | undefined, scope: TransactionScope) => Promise<void>,
  ): Promise<void>;
  /** Applies `change` to each pool of one page inside one transaction and returns the changed pools. */
  updatePage(accountId: string, query: PoolQuery, change: (pool: Pool) => Pool): Promise<PoolPage>;
  delete(accountId: string, id: string): Promise<boolean>;
  countWithLegacyEmail(accountId: string): Promise<number>;
}

interface PoolRow {
  data: string;
}

const parse = (row: PoolRow): Pool => JSON.parse(row.data) as Pool;

/**
 * Pools in `lb_pools` (the API representation as JSON, plus the columns lists filter and order by), on
 * either dialect. Names order byte for byte on both (COLLATE "C" on PostgreSQL).
 */
export class SqlPoolStore implements PoolStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  list(accountId: string, query: PoolQuery): Promise<PoolPage> {
    return this.#page(this.#db, accountId, query);
  }

  async get(accountId: string, id: string): Promise<Pool | undefined> {
    const row = await this.#db.get<PoolRow>('SELECT data FROM lb_pools WHERE account_id = ? AND id = ?', [
      accountId,
      id,
    ]);
    return row ? parse(row) : undefined;
  }

  async listByMonitor(accountId: string, monitorId: string): Promise<Pool[]> {
    const rows = await this.#db.all<PoolRow>(
      'SELECT data FROM lb_pools WHERE account_id = ? AND monitor_id = ? ORDER BY name, id',
      [accountId, monitorId],
    );
    return rows.map(parse);
  }

  async listMonitored(): Promise<{ accountId: string; pool: Pool }[]> {
    const rows = await this.#db.all<PoolRow & { account_id: string }>(
      'SELECT account_id, data FROM lb_pools WHERE monitor_id IS NOT NULL',
    );
    return rows.map((row) => ({ accountId: row.account_id, pool: parse(row) }));
  }

  async nameTaken(accountId: string, name: string, exceptId = ''): Promise<boolean> {
    const row = await this.#db.get('SELECT 1 AS x FROM lb_pools WHERE account_id = ? AND name = ? AND id <> ?', [
      accountId,
      name,
      exceptId,
    ]);
    return row !== undefined;
  }

  async insert(accountId: string, pool: Pool): Promise<void> {
    await constraintsAsErrors(pool, () =>
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

  async update(
    accountId: string,
    pool: Pool,
    within?: (previous: Pool | undefined, scope: TransactionScope) => Promise<void>,
  ): Promise<void> {
    await constraintsAsErrors(pool, () =>
      inTransactionScope(this.#db, async (scope) => {
        const { tx } = scope;
        const row = within
          ? await tx.get<PoolRow>(
              `SELECT data FROM lb_pools WHERE account_id = ? AND id = ?${dialects[tx.dialect].forUpdate}`,
              [accountId, pool.id],
            )
          : undefined;
        await this.#write(tx, accountId, pool);
        await within?.(row ? parse(row) : undefined, scope);
      }),
    );
  }

  updatePage(accountId: string, query: PoolQuery, change: (pool: Pool) => Pool): Promise<PoolPage> {
    return this.#db.transaction(async (tx) => {
      const page = await this.#page(tx, accountId, query, dialects[tx.dialect].forUpdate);
      const changed = page.pools.map(change);
      for (const pool of changed) await this.#write(tx, accountId, pool);
      return { pools: changed, total: page.total };
    });
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    try {
      return (await this.#db.run('DELETE FROM lb_pools WHERE account_id = ? AND id = ?', [accountId, id])).changes > 0;
    } catch (error) {
      // A load balancer started using the pool after the service checked its references.
      if (isForeignKeyViolation(error)) throw LbErrors.stillReferenced(`Pool ${id}`, 'a load balancer');
      throw error;
    }
  }

  async countWithLegacyEmail(accountId: string): Promise<number> {
    const row = await this.#db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM lb_pools WHERE account_id = ? AND notification_email <> ''",
      [accountId],
    );
    return row?.n ?? 0;
  }

  async #page(executor: SqlExecutor, accountId: string, query: PoolQuery, lock = ''): Promise<PoolPage> {
    const byMonitor = query.monitorId !== undefined;
    const where = byMonitor ? 'account_id = ? AND monitor_id = ?' : 'account_id = ?';
    const params = byMonitor ? [accountId, query.monitorId ?? ''] : [accountId];
    const total = (await executor.get<{ n: number }>(`SELECT COUNT(*) AS n FROM lb_pools WHERE ${where}`, params))?.n;
    const rows = await executor.all<PoolRow>(
      `SELECT data FROM lb_pools WHERE ${where} ORDER BY name, id LIMIT ? OFFSET ?${lock}`,
      [...params, query.limit, query.offset],
    );
    return { pools: rows.map(parse), total: total ?? 0 };
  }

  async #write(tx: SqlExecutor, accountId: string, pool: Pool): Promise<void> {
    await tx.run(
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
async function constraintsAsErrors(pool: Pool, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    if (
      isUniqueViolation(error, {
        sqliteColumns: 'lb_pools.account_id, lb_pools.name',
        postgresConstraint: 'lb_pools_account_id_name_key',
      })
    )
      throw LbErrors.duplicatePoolName(pool.name);
    if (isForeignKeyViolation(error))
      throw LbErrors.validation(`monitor: no monitor with id "${pool.monitor}" in this account`);
    throw error;
  }
}
