import { openSync, closeSync, fdatasync } from 'node:fs';
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
 * Writes that are acknowledged as durable (object uploads) await `durable()` after committing: one
 * fdatasync of the WAL, off the event loop, shared by every commit made before it started (group commit).
 */
export class Database {
  readonly path: string;
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  #depth = 0;
  #walFd: number | undefined;
  #walSyncs = 0;
  #syncing: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

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

  /**
   * Resolves once every transaction committed before the call is on disk (survives a power loss, as
   * with `synchronous=FULL`). Concurrent callers share syncs: while one runs, later callers wait for a
   * single next one, so N commits cost far fewer than N fsyncs and the event loop never blocks on them.
   * Sound because SQLite writes WAL frames with write() at commit and only deletes the WAL file when
   * the last connection closes (this one stays open until close()).
   */
  durable(): Promise<void> {
    if (this.#syncing) {
      // The running sync may have started before the caller's commit: wait for the next one.
      this.#queued ??= this.#syncing.then(() => {
        this.#queued = undefined;
        return this.durable();
      });
      return this.#queued;
    }
    this.#syncing = this.#syncWal().finally(() => (this.#syncing = undefined));
    return this.#syncing;
  }

  /** How many WAL syncs `durable()` has issued (benchmarks report syncs per write). */
  get walSyncs(): number {
    return this.#walSyncs;
  }

  close(): void {
    this.#statements.clear();
    if (this.#db.isOpen) this.#db.close();
    const fd = this.#walFd;
    this.#walFd = undefined;
    // A sync in flight keeps its descriptor until it settles (closing it now could hand the number to another file).
    if (fd !== undefined) {
      if (this.#syncing) void this.#syncing.catch(() => undefined).finally(() => closeSync(fd));
      else closeSync(fd);
    }
  }

  #syncWal(): Promise<void> {
    if (this.#walFd === undefined) {
      if (this.path === ':memory:' || this.path === '' || !this.#db.isOpen) return Promise.resolve();
      try {
        // Read-only is enough for fdatasync; SQLite locks the -shm file, never this one.
        this.#walFd = openSync(`${this.path}-wal`, 'r');
      } catch (error) {
        // No WAL yet means nothing was committed through it.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Promise.resolve();
        throw error;
      }
    }
    const fd = this.#walFd;
    this.#walSyncs++;
    return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
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
