import type { SqlExecutor } from '../db/index.ts';

/**
 * Named leases in the shared database: work that one node at a time may do (retention, lifecycle, orphan
 * collection) runs while its node holds the lease. A lease is taken when free or expired, renewed by its
 * holder before it expires, and taken over by another node only once it has expired, so a node that dies
 * stops the work for at most one lease term and two live nodes never hold it together.
 */
export interface LeaseStore {
  /** Takes or renews `name` for `holder` until `now + ttlMs`; false while another holder's lease runs. */
  acquire(name: string, holder: string, ttlMs: number, now: number): Promise<boolean>;
  /** Gives the lease up early (a node stopping), if `holder` still has it. */
  release(name: string, holder: string): Promise<void>;
  /** Who holds `name` at `now`, if anyone. */
  holder(name: string, now: number): Promise<string | undefined>;
}

export class SqlLeaseStore implements LeaseStore {
  readonly #db: SqlExecutor;

  constructor(db: SqlExecutor) {
    this.#db = db;
  }

  async acquire(name: string, holder: string, ttlMs: number, now: number): Promise<boolean> {
    // One statement, so two nodes racing for a free or expired lease cannot both win: the row's unique key
    // serialises the inserts, and the update's condition is evaluated on the row as it is then.
    const result = await this.#db.run(
      `INSERT INTO cluster_leases (name, holder, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE cluster_leases.holder = excluded.holder OR cluster_leases.expires_at <= ?`,
      [name, holder, now + ttlMs, now],
    );
    return result.changes === 1;
  }

  async release(name: string, holder: string): Promise<void> {
    await this.#db.run('DELETE FROM cluster_leases WHERE name = ? AND holder = ?', [name, holder]);
  }

  async holder(name: string, now: number): Promise<string | undefined> {
    const row = await this.#db.get<{ holder: string }>(
      'SELECT holder FROM cluster_leases WHERE name = ? AND expires_at > ?',
      [name, now],
    );
    return row?.holder;
  }
}
