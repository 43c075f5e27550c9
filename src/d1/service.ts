import { randomUUID } from 'node:crypto';
import { clip } from '../shared/errors.ts';
import type { Clock } from '../shared/clock.ts';
import { isoNow } from '../shared/time.ts';
import type { D1EngineClient, EngineStatement } from './engine-client.ts';
import { D1Errors } from './errors.ts';
import { DATABASE_NAME, UUID, type D1DatabaseRecord, type QueryBody, type StatementResult } from './schemas.ts';
import { splitStatements } from './statements.ts';
import type { SqlD1Store } from './store.ts';

/** Cloudflare's limits on the Workers Paid plan: 50,000 databases per account, 10 GB per database. */
export const DEFAULT_D1_LIMITS = { maxDatabasesPerAccount: 50_000, maxDatabaseBytes: 10 * 1024 ** 3 } as const;

export interface D1Limits {
  maxDatabasesPerAccount: number;
  maxDatabaseBytes: number;
}

/** What the engine host is told of: a database created (its account's engines must run). */
export interface D1DatabaseChanges {
  created(database: D1DatabaseRecord): Promise<void>;
}

/** What `meta` says of a whole call (imports): sums over its statements, the size after the last one. */
export interface AggregateMeta {
  duration: number;
  changes: number;
  last_row_id: number;
  rows_read: number;
  rows_written: number;
  size_after: number;
  changed_db: boolean;
}

// The objects Cloudflare and the engine keep in the database for themselves: never listed, never dropped.
const INTERNAL = "name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\'";

/** D1 databases of every account: records here, data in each account's engine (engine-client.ts). */
export class D1Service {
  readonly #store: SqlD1Store;
  readonly #engine: D1EngineClient;
  readonly #limits: D1Limits;
  readonly #changes: D1DatabaseChanges | undefined;
  readonly #clock: Clock;

  constructor(deps: {
    store: SqlD1Store;
    engine: D1EngineClient;
    limits?: Partial<D1Limits> | undefined;
    changes?: D1DatabaseChanges | undefined;
    clock: Clock;
  }) {
    this.#store = deps.store;
    this.#engine = deps.engine;
    this.#limits = { ...DEFAULT_D1_LIMITS, ...deps.limits };
    this.#changes = deps.changes;
    this.#clock = deps.clock;
  }

  get limits(): D1Limits {
    return this.#limits;
  }

  async create(
    accountId: string,
    body: { name: string; jurisdiction?: string | undefined; primary_location_hint?: string | undefined },
  ): Promise<D1DatabaseRecord> {
    if (!DATABASE_NAME.test(body.name) || UUID.test(body.name)) {
      throw D1Errors.validation(
        `"${clip(body.name)}" is not a valid database name: use 1 to 64 letters, digits, "-" and "_", starting with a letter or digit (and not shaped like an id).`,
      );
    }
    if (await this.#store.find(accountId, body.name)) throw D1Errors.duplicateName(body.name);
    if ((await this.#store.count(accountId)) >= this.#limits.maxDatabasesPerAccount) {
      throw D1Errors.tooMany(this.#limits.maxDatabasesPerAccount);
    }
    const record: D1DatabaseRecord = {
      uuid: randomUUID(),
      account_id: accountId,
      name: body.name,
      jurisdiction: body.jurisdiction ?? null,
      primary_location_hint: body.primary_location_hint ?? null,
      created_at: isoNow(this.#clock),
    };
    await this.#store.insert(record);
    await this.#changes?.created(record);
    return record;
  }

  async require(accountId: string, idOrName: string): Promise<D1DatabaseRecord> {
    const found = await this.#store.find(accountId, idOrName);
    if (!found) throw D1Errors.notFound(idOrName);
    return found;
  }

  list(accountId: string, query: { name?: string | undefined; offset: number; limit: number }) {
    return this.#store.list(accountId, query);
  }

  /** Tables (the application's, not SQLite's or the engine's) and the file's size, from the engine. */
  async stats(database: D1DatabaseRecord): Promise<{ num_tables: number; file_size: number }> {
    const {
      results: [result],
    } = await this.#engine.run(database.account_id, database.uuid, [
      { sql: `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND ${INTERNAL}` },
    ]);
    return { num_tables: Number(result?.rows[0]?.[0] ?? 0), file_size: result?.meta.size_after ?? 0 };
  }

  /** Drops everything the application made, then the record: the id answers nothing any more. */
  async delete(accountId: string, idOrName: string): Promise<void> {
    const database = await this.require(accountId, idOrName);
    const {
      results: [objects],
    } = await this.#engine.run(accountId, database.uuid, [
      { sql: `SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'view', 'trigger') AND ${INTERNAL}` },
    ]);
    const drops: EngineStatement[] = (objects?.rows ?? []).map(([type, name]) => ({
      sql: `DROP ${String(type).toUpperCase()} IF EXISTS "${String(name).replace(/"/g, '""')}"`,
    }));
    // Tables that refer to each other drop in any order once the check waits for the commit.
    if (drops.length > 0)
      await this.#engine.run(accountId, database.uuid, [{ sql: 'PRAGMA defer_foreign_keys = ON' }, ...drops]);
    await this.#store.delete(accountId, database.uuid);
  }

  /**
   * Runs a `query`/`raw` body: every statement of it in one transaction, one result per statement. The
   * duration is the engine call's, shared out between the statements (the engine's clock stands still).
   */
  async query(database: D1DatabaseRecord, body: QueryBody): Promise<StatementResult[]> {
    return (await this.execute(database, statementsOf(body))).results;
  }

  /**
   * Runs statements in one call (one transaction). The engine caps each database at the account's size
   * limit: a write past it fails there, as SQLite's SQLITE_FULL, and rolls the call back.
   */
  async execute(
    database: D1DatabaseRecord,
    statements: EngineStatement[],
    options: { bookmark?: boolean } = {},
  ): Promise<{ results: StatementResult[]; meta: AggregateMeta; bookmark?: string | undefined }> {
    if (statements.length === 0) throw D1Errors.validation('No SQL statements detected.');
    const started = this.#clock.monotonic();
    const { results, bookmark } = await this.#engine.run(database.account_id, database.uuid, statements, options);
    const duration = this.#clock.monotonic() - started;
    const each = duration / Math.max(1, results.length);
    for (const result of results) {
      result.meta.duration = each;
      result.meta.timings = { sql_duration_ms: each };
    }
    const last = results.at(-1)?.meta;
    return {
      results,
      bookmark,
      meta: {
        duration,
        changes: results.reduce((n, r) => n + r.meta.changes, 0),
        last_row_id: last?.last_row_id ?? 0,
        rows_read: results.reduce((n, r) => n + r.meta.rows_read, 0),
        rows_written: results.reduce((n, r) => n + r.meta.rows_written, 0),
        size_after: last?.size_after ?? 0,
        changed_db: results.some((r) => r.meta.changed_db),
      },
    };
  }

  dump(database: D1DatabaseRecord, options: { noSchema: boolean; noData: boolean; tables: string[] }) {
    return this.#engine.dump(database.account_id, database.uuid, options);
  }
}

/**
 * The statements of a body. A `sql` with several statements answers one result each, as D1 does; values
 * bind to one statement only, so a text with parameters must hold exactly one.
 */
export function statementsOf(body: QueryBody): EngineStatement[] {
  const items = 'batch' in body ? body.batch : [body];
  return items.flatMap((item) => {
    const parts = splitStatements(item.sql);
    if (item.params && item.params.length > 0) {
      if (parts.length > 1) {
        throw D1Errors.validation(
          'params bind to one statement, and this sql holds several: send them as a batch, each with its own params.',
        );
      }
      return [{ sql: item.sql, params: item.params }];
    }
    return parts.map((sql) => ({ sql }));
  });
}
