import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';

export type SqlParams = Record<string, SQLInputValue> | SQLInputValue[];

export interface RunResult {
  changes: number;
  lastInsertRowid: number;
}

/**
 * The embedded SQLite database (node:sqlite): WAL mode, foreign keys on, prepared statements cached.
 *
 * Calls are synchronous underneath; stores expose async interfaces on top so that a PostgreSQL
 * implementation can replace them later without touching callers. `synchronous=NORMAL` keeps every
 * committed transaction across a process crash (kill -9); only a power loss may drop the last commits.
 */
export class Database {
  readonly path: string;
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  #depth = 0;

  constructor(path: string) {
    this.path = path;
    this.#db = new DatabaseSync(path);
    this.#db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = NORMAL;
      PRAGMA foreign_keys = ON;
      PRAGMA busy_timeout = 5000;
    `);
  }

  exec(sql: string): void {
    this.#db.exec(sql);
  }

  run(sql: string, params: SqlParams = []): RunResult {
    const result = this.#bind(this.#prepare(sql), 'run', params) as {
      changes: number | bigint;
      lastInsertRowid: number | bigint;
    };
    return { changes: Number(result.changes), lastInsertRowid: Number(result.lastInsertRowid) };
  }

  get<T>(sql: string, params: SqlParams = []): T | undefined {
    return this.#bind(this.#prepare(sql), 'get', params) as T | undefined;
  }

  all<T>(sql: string, params: SqlParams = []): T[] {
    return this.#bind(this.#prepare(sql), 'all', params) as T[];
  }

  /** Streams rows one at a time (large listings without materialising them). */
  iterate<T>(sql: string, params: SqlParams = []): IterableIterator<T> {
    return this.#bind(this.#prepare(sql), 'iterate', params) as IterableIterator<T>;
  }

  /**
   * Runs `fn` in one transaction (BEGIN IMMEDIATE so writers queue instead of failing on upgrade).
   * Nested calls become savepoints, so helpers can be transactional on their own and still compose.
   */
  transaction<T>(fn: () => T): T {
    const savepoint = `sp_${this.#depth}`;
    this.#db.exec(this.#depth === 0 ? 'BEGIN IMMEDIATE' : `SAVEPOINT ${savepoint}`);
    this.#depth++;
    try {
      const result = fn();
      if (result instanceof Promise) throw new Error('Database.transaction callbacks must be synchronous');
      this.#depth--;
      this.#db.exec(this.#depth === 0 ? 'COMMIT' : `RELEASE ${savepoint}`);
      return result;
    } catch (error) {
      this.#depth--;
      this.#db.exec(this.#depth === 0 ? 'ROLLBACK' : `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
      throw error;
    }
  }

  get inTransaction(): boolean {
    return this.#depth > 0;
  }

  close(): void {
    this.#statements.clear();
    if (this.#db.isOpen) this.#db.close();
  }

  #prepare(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #bind(statement: StatementSync, method: 'run' | 'get' | 'all' | 'iterate', params: SqlParams): unknown {
    return Array.isArray(params) ? statement[method](...params) : statement[method](params);
  }
}

/** SQLite has no booleans: store 0/1. */
export const toSqlBool = (value: boolean): number => (value ? 1 : 0);
export const fromSqlBool = (value: unknown): boolean => value === 1 || value === 1n;
