/**
 * The persistence contract every store is written against, with two implementations: SQLite (embedded
 * default, `sqlite-database.ts`) and PostgreSQL (`postgres-database.ts`).
 *
 * Stores write portable SQL with `?` placeholders; the PostgreSQL side numbers them. Column types are
 * kept to what both dialects read back the same way: TEXT (timestamps as ISO-8601 text), INTEGER/BIGINT
 * (returned as JS numbers by both; booleans as 0/1), BLOB/BYTEA (returned as Uint8Array). Where the
 * dialects really differ (JSON functions, case-insensitive text, row locks) a store asks `dialect`.
 */
export type SqlValue = string | number | bigint | null | Uint8Array;
export type SqlParams = readonly SqlValue[];

export type DialectName = 'sqlite' | 'postgres';

export interface RunResult {
  /** Rows inserted, updated or deleted by the statement. */
  changes: number;
}

/** What runs statements: the database itself (one statement, autocommit) or an open transaction. */
export interface SqlExecutor {
  readonly dialect: DialectName;
  get<T>(sql: string, params?: SqlParams): Promise<T | undefined>;
  all<T>(sql: string, params?: SqlParams): Promise<T[]>;
  run(sql: string, params?: SqlParams): Promise<RunResult>;
}

/**
 * An open transaction. Pass it to whatever must write in the same transaction (a health transition and
 * the notifications it queues); never hold one across network I/O.
 */
export interface SqlTransaction extends SqlExecutor {
  /**
   * Serialises this transaction with every other one that takes the same `name` until it ends, also
   * when no row exists yet to lock (two creators of one key, two checks of one precondition). SQLite
   * transactions are serial already; PostgreSQL takes a transaction-scoped advisory lock.
   */
  lock(name: string): Promise<void>;
  /** Runs a script of statements (schema migrations). */
  exec(sql: string): Promise<void>;
  /** A nested transaction (a savepoint): rolled back alone if `fn` throws. */
  transaction<T>(fn: (tx: SqlTransaction) => Promise<T>): Promise<T>;
}

export interface SqlDatabase extends SqlExecutor {
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. Writers are
   * serialised on SQLite; on PostgreSQL it runs READ COMMITTED, so a store that checks a precondition
   * locks what it checks (`SELECT ... FOR UPDATE` via `dialect`, or `tx.lock(name)`).
   */
  transaction<T>(fn: (tx: SqlTransaction) => Promise<T>): Promise<T>;
  /** Runs a script of statements (schema migrations) outside any store. */
  exec(sql: string): Promise<void>;
  /**
   * Resolves once every transaction committed before the call survives a power loss. SQLite syncs its
   * WAL (group commit); PostgreSQL's commits are durable when acknowledged (synchronous_commit=on).
   */
  durable(): Promise<void>;
  close(): Promise<void>;
}

/** Booleans are stored as INTEGER 0/1 in both dialects, so one schema and one row mapper serve both. */
export const toSqlBool = (value: boolean): number => (value ? 1 : 0);
export const fromSqlBool = (value: unknown): boolean => value === 1 || value === 1n || value === true;

/**
 * The few places the dialects differ, as SQL fragments a store can splice in. Kept small on purpose:
 * a store needing more than this should be rewritten in the common subset first.
 */
export interface Dialect {
  name: DialectName;
  /** Appended to a SELECT that reads rows it will change in the same transaction (' FOR UPDATE' or ''). */
  forUpdate: string;
  /** Appended to a SELECT that claims work rows (' FOR UPDATE SKIP LOCKED' or ''). */
  skipLocked: string;
  /** `column IN (...)` for a JSON array of values passed as ONE text parameter. */
  inJsonArray(column: string, type: 'text' | 'integer'): string;
  /** Rows of a JSON array passed as one text parameter, as `(key, value)` (for INSERT ... SELECT). */
  jsonArrayRows: string;
  /** Position of `needle` in `haystack` (1-based, 0 when absent), as SQLite's instr. */
  position(haystack: string, needle: string): string;
}

export const dialects: Record<DialectName, Dialect> = {
  sqlite: {
    name: 'sqlite',
    forUpdate: '',
    skipLocked: '',
    inJsonArray: (column) => `${column} IN (SELECT value FROM json_each(?))`,
    jsonArrayRows: 'json_each(?)',
    position: (haystack, needle) => `instr(${haystack}, ${needle})`,
  },
  postgres: {
    name: 'postgres',
    forUpdate: ' FOR UPDATE',
    skipLocked: ' FOR UPDATE SKIP LOCKED',
    inJsonArray: (column, type) =>
      `${column} IN (SELECT value::${type === 'integer' ? 'bigint' : 'text'} FROM jsonb_array_elements_text(CAST(? AS text)::jsonb))`,
    jsonArrayRows:
      '(SELECT (ordinality - 1) AS key, value FROM jsonb_array_elements_text(CAST(? AS text)::jsonb) WITH ORDINALITY) AS j',
    position: (haystack, needle) => `strpos(${haystack}, ${needle})`,
  },
};
