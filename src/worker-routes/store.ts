import { isUniqueViolation, type SqlDatabase, type SqlExecutor } from '../db/index.ts';
import { RouteErrors } from './errors.ts';

export interface RouteRecord {
  id: string;
  account_id: string;
  zone_id: string;
  pattern: string;
  script: string | null;
  created_on: string;
}

export interface DomainRecord {
  id: string;
  account_id: string;
  zone_id: string;
  hostname: string;
  service: string;
  environment: string;
  created_on: string;
}

const ROUTE_COLUMNS = 'id, account_id, zone_id, pattern, script, created_on';
const DOMAIN_COLUMNS = 'id, account_id, zone_id, hostname, service, environment, created_on';

/** Routes and Custom Domains in SQL (both dialects). */
export class SqlWorkerRouteStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.#db.transaction(async (tx) => {
      // One writer of routes at a time: "this pattern is free" stays true until the insert.
      await tx.lock('worker-routes');
      return fn(tx);
    });
  }

  async insertRoute(route: RouteRecord, db: SqlExecutor = this.#db): Promise<void> {
    try {
      await db.run(`INSERT INTO worker_routes (${ROUTE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`, [
        route.id,
        route.account_id,
        route.zone_id,
        route.pattern,
        route.script,
        route.created_on,
      ]);
    } catch (error) {
      if (isUniqueViolation(error)) throw RouteErrors.duplicatePattern(route.pattern);
      throw error;
    }
  }

  async updateRoute(route: RouteRecord, db: SqlExecutor = this.#db): Promise<void> {
    try {
      await db.run('UPDATE worker_routes SET pattern = ?, script = ? WHERE id = ?', [
        route.pattern,
        route.script,
        route.id,
      ]);
    } catch (error) {
      if (isUniqueViolation(error)) throw RouteErrors.duplicatePattern(route.pattern);
      throw error;
    }
  }

  getRoute(zoneId: string, id: string, db: SqlExecutor = this.#db): Promise<RouteRecord | undefined> {
    return db.get<RouteRecord>(`SELECT ${ROUTE_COLUMNS} FROM worker_routes WHERE zone_id = ? AND id = ?`, [zoneId, id]);
  }

  routeByPattern(zoneId: string, pattern: string, db: SqlExecutor = this.#db): Promise<RouteRecord | undefined> {
    return db.get<RouteRecord>(`SELECT ${ROUTE_COLUMNS} FROM worker_routes WHERE zone_id = ? AND pattern = ?`, [
      zoneId,
      pattern,
    ]);
  }

  zoneRoutes(zoneId: string): Promise<RouteRecord[]> {
    return this.#db.all<RouteRecord>(
      `SELECT ${ROUTE_COLUMNS} FROM worker_routes WHERE zone_id = ? ORDER BY pattern, id`,
      [zoneId],
    );
  }

  scriptRoutes(accountId: string, script: string, db: SqlExecutor = this.#db): Promise<RouteRecord[]> {
    return db.all<RouteRecord>(
      `SELECT ${ROUTE_COLUMNS} FROM worker_routes WHERE account_id = ? AND script = ? ORDER BY pattern, id`,
      [accountId, script],
    );
  }

  async deleteRoute(id: string, db: SqlExecutor = this.#db): Promise<boolean> {
    return (await db.run('DELETE FROM worker_routes WHERE id = ?', [id])).changes > 0;
  }

  async insertDomain(domain: DomainRecord, db: SqlExecutor = this.#db): Promise<void> {
    await db.run(`INSERT INTO worker_domains (${DOMAIN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
      domain.id,
      domain.account_id,
      domain.zone_id,
      domain.hostname,
      domain.service,
      domain.environment,
      domain.created_on,
    ]);
  }

  async repointDomain(id: string, service: string, environment: string, db: SqlExecutor = this.#db): Promise<void> {
    await db.run('UPDATE worker_domains SET service = ?, environment = ? WHERE id = ?', [service, environment, id]);
  }

  domainByHostname(hostname: string, db: SqlExecutor = this.#db): Promise<DomainRecord | undefined> {
    return db.get<DomainRecord>(`SELECT ${DOMAIN_COLUMNS} FROM worker_domains WHERE hostname = ?`, [hostname]);
  }

  getDomain(accountId: string, id: string): Promise<DomainRecord | undefined> {
    return this.#db.get<DomainRecord>(`SELECT ${DOMAIN_COLUMNS} FROM worker_domains WHERE account_id = ? AND id = ?`, [
      accountId,
      id,
    ]);
  }

  accountDomains(accountId: string, db: SqlExecutor = this.#db): Promise<DomainRecord[]> {
    return db.all<DomainRecord>(
      `SELECT ${DOMAIN_COLUMNS} FROM worker_domains WHERE account_id = ? ORDER BY hostname, id`,
      [accountId],
    );
  }

  async deleteDomain(id: string, db: SqlExecutor = this.#db): Promise<boolean> {
    return (await db.run('DELETE FROM worker_domains WHERE id = ?', [id])).changes > 0;
  }

  /** What a deleted script leaves: its routes and Custom Domains go with it. */
  async forgetScript(accountId: string, script: string): Promise<number> {
    return this.#db.transaction(async (tx) => {
      const routes = await tx.run('DELETE FROM worker_routes WHERE account_id = ? AND script = ?', [accountId, script]);
      const domains = await tx.run('DELETE FROM worker_domains WHERE account_id = ? AND service = ?', [
        accountId,
        script,
      ]);
      return routes.changes + domains.changes;
    });
  }

  async forgetZone(zoneId: string): Promise<void> {
    await this.#db.transaction(async (tx) => {
      await tx.run('DELETE FROM worker_routes WHERE zone_id = ?', [zoneId]);
      await tx.run('DELETE FROM worker_domains WHERE zone_id = ?', [zoneId]);
    });
  }

  /** Everything the traffic port serves, for the in-memory table. */
  async everything(): Promise<{
    routes: Pick<RouteRecord, 'pattern' | 'account_id' | 'script'>[];
    domains: Pick<DomainRecord, 'hostname' | 'account_id' | 'service'>[];
  }> {
    const routes = await this.#db.all<Pick<RouteRecord, 'pattern' | 'account_id' | 'script'>>(
      'SELECT pattern, account_id, script FROM worker_routes',
    );
    const domains = await this.#db.all<Pick<DomainRecord, 'hostname' | 'account_id' | 'service'>>(
      'SELECT hostname, account_id, service FROM worker_domains',
    );
    return { routes, domains };
  }

  /** `account/script` of every script a route or Custom Domain names: the runtime loads them. */
  async routedScripts(): Promise<Set<string>> {
    const rows = await this.#db.all<{ account_id: string; script: string }>(
      `SELECT account_id, script FROM worker_routes WHERE script IS NOT NULL
       UNION SELECT account_id, service AS script FROM worker_domains`,
    );
    return new Set(rows.map((r) => `${r.account_id}/${r.script}`));
  }
}
