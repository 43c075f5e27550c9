import { isUniqueViolation, type SqlDatabase } from '../db/index.ts';
import { ZoneErrors } from './errors.ts';
import type { Zone } from './schemas.ts';

export interface ZoneQuery {
  /** Accounts whose zones are listed (the caller's); an empty list lists nothing. */
  accountIds: readonly string[];
  /** Exact name, or a LIKE pattern built by the service (`starts_with:` and friends). */
  name?: { exact: string } | { like: string } | undefined;
  status?: string | undefined;
  order: 'name' | 'status' | 'account_id';
  direction: 'asc' | 'desc';
  offset: number;
  limit: number;
}

/** Persistence of zones. Async so that another backend (PostgreSQL) can replace the SQLite one. */
export interface ZoneStore {
  insert(zone: Zone): Promise<void>;
  get(id: string): Promise<Zone | undefined>;
  getByName(name: string): Promise<Zone | undefined>;
  /** The zone with the longest name among `names` (a hostname's suffixes: its most specific zone). */
  longestOf(names: readonly string[]): Promise<Zone | undefined>;
  list(query: ZoneQuery): Promise<{ zones: Zone[]; total: number }>;
  delete(id: string): Promise<boolean>;
}

const COLUMNS = 'id, account_id, name, status, type, created_on, modified_on';

/** Both dialects (src/db/sql.ts). */
export class SqlZoneStore implements ZoneStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async insert(zone: Zone): Promise<void> {
    try {
      await this.#db.run(`INSERT INTO zones (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
        zone.id,
        zone.account_id,
        zone.name,
        zone.status,
        zone.type,
        zone.created_on,
        zone.modified_on,
      ]);
    } catch (error) {
      // Two creations of one name that both passed the service's check: the loser still gets a 1061.
      if (isUniqueViolation(error, { sqliteColumns: 'zones.name', postgresConstraint: 'zones_name_key' }))
        throw ZoneErrors.duplicateName(zone.name);
      throw error;
    }
  }

  async get(id: string): Promise<Zone | undefined> {
    return this.#db.get<Zone>(`SELECT ${COLUMNS} FROM zones WHERE id = ?`, [id]);
  }

  async getByName(name: string): Promise<Zone | undefined> {
    return this.#db.get<Zone>(`SELECT ${COLUMNS} FROM zones WHERE name = ?`, [name]);
  }

  async longestOf(names: readonly string[]): Promise<Zone | undefined> {
    if (names.length === 0) return undefined;
    return this.#db.get<Zone>(
      `SELECT ${COLUMNS} FROM zones WHERE name IN (${names.map(() => '?').join(', ')})
       ORDER BY LENGTH(name) DESC LIMIT 1`,
      [...names],
    );
  }

  async list(query: ZoneQuery): Promise<{ zones: Zone[]; total: number }> {
    if (query.accountIds.length === 0) return { zones: [], total: 0 };
    const where = [`account_id IN (${query.accountIds.map(() => '?').join(', ')})`];
    const params: string[] = [...query.accountIds];
    if (query.name && 'exact' in query.name) {
      where.push('name = ?');
      params.push(query.name.exact);
    } else if (query.name) {
      where.push("name LIKE ? ESCAPE '\\'");
      // Names are stored lowercased; PostgreSQL's LIKE, unlike SQLite's, is case-sensitive.
      params.push(query.name.like.toLowerCase());
    }
    if (query.status !== undefined) {
      where.push('status = ?');
      params.push(query.status);
    }
    const clause = where.join(' AND ');
    const total =
      (await this.#db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM zones WHERE ${clause}`, params))?.n ?? 0;
    const direction = query.direction === 'desc' ? 'DESC' : 'ASC';
    const zones = await this.#db.all<Zone>(
      `SELECT ${COLUMNS} FROM zones WHERE ${clause} ORDER BY ${query.order} ${direction}, name ${direction}, id
       LIMIT ? OFFSET ?`,
      [...params, query.limit, query.offset],
    );
    return { zones, total };
  }

  async delete(id: string): Promise<boolean> {
    return (await this.#db.run('DELETE FROM zones WHERE id = ?', [id])).changes > 0;
  }
}
