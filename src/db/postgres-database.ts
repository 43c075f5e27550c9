import postgres from 'postgres';
import { numberPlaceholders } from './placeholders.ts';
import type { RunResult, SqlDatabase, SqlParams, SqlTransaction } from './sql.ts';

type Client = postgres.Sql | postgres.TransactionSql;

/** PostgreSQL type oids whose text form is read back as a JS number (see `number` below). */
const INT8 = 20;
const NUMERIC = 1700;

export interface PostgresOptions {
  /** Connections in this process's pool (default 10). */
  maxConnections?: number;
}

/**
 * PostgreSQL (15+) through the `postgres` client: a pool of connections, statements prepared per
 * connection, transactions READ COMMITTED. Several `ledge server` nodes may share one database.
 *
 * BIGINT and NUMERIC come back as JS numbers, as SQLite's integers do, so one row mapper serves both
 * dialects: object sizes, counts and millisecond times stay far below 2^53.
 */
export class PostgresDatabase implements SqlDatabase {
  readonly dialect = 'postgres' as const;
  readonly #sql: postgres.Sql;

  constructor(url: string, options: PostgresOptions = {}) {
    const number = { to: INT8, from: [INT8, NUMERIC], serialize: (value: unknown) => String(value), parse: Number };
    this.#sql = postgres(url, {
      max: options.maxConnections ?? 10,
      types: { number },
      // Notices (e.g. "relation already exists, skipping") are not errors and not for the console.
      onnotice: () => undefined,
      connect_timeout: 10,
      idle_timeout: 60,
    });
  }

  get<T>(sql: string, params: SqlParams = []): Promise<T | undefined> {
    return first<T>(query(this.#sql, sql, params));
  }

  all<T>(sql: string, params: SqlParams = []): Promise<T[]> {
    return rows<T>(query(this.#sql, sql, params));
  }

  run(sql: string, params: SqlParams = []): Promise<RunResult> {
    return changes(query(this.#sql, sql, params));
  }

  async exec(sql: string): Promise<void> {
    await this.#sql.unsafe(sql);
  }

  transaction<T>(fn: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    return this.#sql.begin(async (sql) => {
      const tx = new PostgresTransaction(sql);
      try {
        return await fn(tx);
      } finally {
        tx.end();
      }
    }) as Promise<T>;
  }

  /** Acknowledged commits are on disk already (synchronous_commit=on, PostgreSQL's default). */
  durable(): Promise<void> {
    return Promise.resolve();
  }

  async close(): Promise<void> {
    await this.#sql.end({ timeout: 5 });
  }

  /** The client itself, for what is not a statement (LISTEN/NOTIFY across nodes). */
  get client(): postgres.Sql {
    return this.#sql;
  }
}

class PostgresTransaction implements SqlTransaction {
  readonly dialect = 'postgres' as const;
  readonly #sql: postgres.TransactionSql;
  #open = true;

  constructor(sql: postgres.TransactionSql) {
    this.#sql = sql;
  }

  async get<T>(sql: string, params: SqlParams = []): Promise<T | undefined> {
    return first<T>(query(this.#live(), sql, params));
  }

  async all<T>(sql: string, params: SqlParams = []): Promise<T[]> {
    return rows<T>(query(this.#live(), sql, params));
  }

  async run(sql: string, params: SqlParams = []): Promise<RunResult> {
    return changes(query(this.#live(), sql, params));
  }

  async exec(sql: string): Promise<void> {
    await this.#live().unsafe(sql);
  }

  async lock(name: string): Promise<void> {
    await this.#live().unsafe('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [name]);
  }

  async transaction<T>(fn: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    return this.#live().savepoint(async (sql) => {
      const nested = new PostgresTransaction(sql);
      try {
        return await fn(nested);
      } finally {
        nested.end();
      }
    }) as Promise<T>;
  }

  end(): void {
    this.#open = false;
  }

  #live(): postgres.TransactionSql {
    if (!this.#open) throw new Error('this transaction has ended');
    return this.#sql;
  }
}

function query(client: Client, sql: string, params: SqlParams): postgres.PendingQuery<postgres.Row[]> {
  // The client sends Buffers as bytea; a plain Uint8Array is viewed as one without copying.
  const values = params.map((value) =>
    value instanceof Uint8Array && !Buffer.isBuffer(value)
      ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
      : value,
  );
  return client.unsafe(numberPlaceholders(sql), values as postgres.ParameterOrJSON<never>[], { prepare: true });
}

async function first<T>(pending: postgres.PendingQuery<postgres.Row[]>): Promise<T | undefined> {
  const result = await pending;
  return result[0] as T | undefined;
}

async function rows<T>(pending: postgres.PendingQuery<postgres.Row[]>): Promise<T[]> {
  return Array.from(await pending) as T[];
}

async function changes(pending: postgres.PendingQuery<postgres.Row[]>): Promise<RunResult> {
  const result = await pending;
  return { changes: result.count };
}
