import {
  dialects,
  isForeignKeyViolation,
  isUniqueViolation,
  type SqlDatabase,
  type SqlExecutor,
} from '../../db/index.ts';
import { LbErrors } from '../errors.ts';
import { referencedPoolIds, type LoadBalancer } from './schemas.ts';

/** Where a load balancer lives: the owning account and zone. */
export interface LoadBalancerPlace {
  accountId: string;
  zoneId: string;
}

export interface PlacedLoadBalancer extends LoadBalancerPlace {
  loadBalancer: LoadBalancer;
}

/** Persistence of zone load balancers. One implementation for both dialects. */
export interface LoadBalancerStore {
  /** Every load balancer of a zone, ordered by hostname (Cloudflare answers the list in one page). */
  list(zoneId: string): Promise<LoadBalancer[]>;
  get(zoneId: string, id: string): Promise<LoadBalancer | undefined>;
  /** The load balancer serving a hostname, whatever its account (the traffic listener's lookup). */
  getByName(name: string): Promise<PlacedLoadBalancer | undefined>;
  /** Does another load balancer (anywhere: hostnames route globally) already use this hostname? */
  nameTaken(name: string, exceptId?: string): Promise<boolean>;
  /** Load balancers of the account that name the pool (default, fallback or region/pop/country pools). */
  listByPool(accountId: string, poolId: string): Promise<LoadBalancer[]>;
  insert(place: LoadBalancerPlace, lb: LoadBalancer): Promise<void>;
  update(zoneId: string, lb: LoadBalancer): Promise<void>;
  delete(zoneId: string, id: string): Promise<boolean>;
  /** Removes every load balancer of a zone; answers their hostnames. */
  deleteZone(zoneId: string): Promise<string[]>;
}

interface Row {
  data: string;
}

/** Both dialects (src/db/sql.ts): the full object is a JSON text column, the pools it names a join table. */
export class SqlLoadBalancerStore implements LoadBalancerStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async list(zoneId: string): Promise<LoadBalancer[]> {
    const rows = await this.#db.all<Row>('SELECT data FROM lb_load_balancers WHERE zone_id = ? ORDER BY name, id', [
      zoneId,
    ]);
    return rows.map(parse);
  }

  async get(zoneId: string, id: string): Promise<LoadBalancer | undefined> {
    const row = await this.#db.get<Row>('SELECT data FROM lb_load_balancers WHERE zone_id = ? AND id = ?', [
      zoneId,
      id,
    ]);
    return row ? parse(row) : undefined;
  }

  async getByName(name: string): Promise<PlacedLoadBalancer | undefined> {
    const row = await this.#db.get<Row & { account_id: string; zone_id: string }>(
      'SELECT account_id, zone_id, data FROM lb_load_balancers WHERE name = ?',
      [name],
    );
    return row ? { accountId: row.account_id, zoneId: row.zone_id, loadBalancer: parse(row) } : undefined;
  }

  async nameTaken(name: string, exceptId = ''): Promise<boolean> {
    const row = await this.#db.get('SELECT 1 AS x FROM lb_load_balancers WHERE name = ? AND id <> ?', [name, exceptId]);
    return row !== undefined;
  }

  async listByPool(accountId: string, poolId: string): Promise<LoadBalancer[]> {
    const rows = await this.#db.all<Row>(
      `SELECT lb.data FROM lb_load_balancers lb
       JOIN lb_load_balancer_pools uses ON uses.load_balancer_id = lb.id
       WHERE lb.account_id = ? AND uses.pool_id = ? ORDER BY lb.name, lb.id`,
      [accountId, poolId],
    );
    return rows.map(parse);
  }

  async insert(place: LoadBalancerPlace, lb: LoadBalancer): Promise<void> {
    await constraintsAsErrors(lb, () =>
      this.#db.transaction(async (tx) => {
        await tx.run(
          `INSERT INTO lb_load_balancers (id, account_id, zone_id, name, data, created_on, modified_on)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
          [lb.id, place.accountId, place.zoneId, lb.name, JSON.stringify(lb), lb.created_on, lb.modified_on],
        );
        await writeUses(tx, lb);
      }),
    );
  }

  async update(zoneId: string, lb: LoadBalancer): Promise<void> {
    await constraintsAsErrors(lb, () =>
      this.#db.transaction(async (tx) => {
        const { changes } = await tx.run(
          'UPDATE lb_load_balancers SET name = ?, data = ?, modified_on = ? WHERE zone_id = ? AND id = ?',
          [lb.name, JSON.stringify(lb), lb.modified_on, zoneId, lb.id],
        );
        if (changes === 0) throw LbErrors.loadBalancerNotFound(lb.id);
        await tx.run('DELETE FROM lb_load_balancer_pools WHERE load_balancer_id = ?', [lb.id]);
        await writeUses(tx, lb);
      }),
    );
  }

  async delete(zoneId: string, id: string): Promise<boolean> {
    const { changes } = await this.#db.run('DELETE FROM lb_load_balancers WHERE zone_id = ? AND id = ?', [zoneId, id]);
    return changes > 0;
  }

  async deleteZone(zoneId: string): Promise<string[]> {
    return this.#db.transaction(async (tx) => {
      const rows = await tx.all<{ name: string }>(
        `SELECT name FROM lb_load_balancers WHERE zone_id = ?${dialects[tx.dialect].forUpdate}`,
        [zoneId],
      );
      await tx.run('DELETE FROM lb_load_balancers WHERE zone_id = ?', [zoneId]);
      return rows.map((row) => row.name);
    });
  }
}

async function writeUses(tx: SqlExecutor, lb: LoadBalancer): Promise<void> {
  for (const poolId of referencedPoolIds(lb))
    await tx.run('INSERT INTO lb_load_balancer_pools (load_balancer_id, pool_id) VALUES (?, ?)', [lb.id, poolId]);
}

function parse(row: Row): LoadBalancer {
  return JSON.parse(row.data) as LoadBalancer;
}

/**
 * The service checks hostnames and pools first; these constraints catch the race where two requests pass
 * those checks together (or a pool is deleted in between), so the loser still gets a client error.
 */
async function constraintsAsErrors(lb: LoadBalancer, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    if (
      isUniqueViolation(error, {
        sqliteColumns: 'lb_load_balancers.name',
        postgresConstraint: 'lb_load_balancers_name_key',
      })
    )
      throw LbErrors.duplicateLoadBalancerName(lb.name);
    if (isForeignKeyViolation(error))
      throw LbErrors.validation('pools: a pool named by this load balancer was deleted meanwhile');
    throw error;
  }
}
