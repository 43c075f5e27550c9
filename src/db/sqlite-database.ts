import { AsyncLocalStorage } from 'node:async_hooks';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { SerialLock } from './serial-lock.ts';
import type { RunResult, SqlDatabase, SqlParams, SqlTransaction } from './sql.ts';
import { WalSync } from './wal-sync.ts';

/**
 * The embedded default: node:sqlite in WAL mode, foreign keys on, prepared statements cached.
 *
 * SQLite runs one writer at a time, and node:sqlite is synchronous: a transaction whose callback awaits
 * would otherwise let any other statement of the process run inside it. So every write (a transaction or
 * a lone statement) takes one FIFO lock, and lone reads run at once: on the writer connection when no
 * transaction holds it, else on a second, read-only connection, which sees what is committed and never
 * waits for a writer.
 *
 * Durability: `synchronous=NORMAL` keeps every commit across a process crash (kill -9); `durable()` adds
 * power-loss safety for the writes that promise it (object uploads) with one shared WAL fsync.
 */
export class SqliteDatabase implements SqlDatabase {
  readonly dialect = 'sqlite' as const;
  readonly path: string;
  readonly #writer: Connection;
  readonly #reader: Connection | undefined;
  readonly #lock = new SerialLock();
  /** Set while a transaction's callback runs, to catch `db.run` where `tx.run` was meant (it would deadlock). */
  readonly #inTransaction = new AsyncLocalStorage<true>();
  readonly #wal: WalSync;
  /** Transactions waiting to run together (see transaction), while one is scheduled. */
  #batch: BatchItem[] | undefined;

  constructor(path: string) {
    this.path = path;
    const db = new DatabaseSync(path);
    db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = NORMAL;
      PRAGMA foreign_keys = ON;
      PRAGMA busy_timeout = 5000;
    `);
    this.#writer = new Connection(db);
    // An in-memory database cannot be shared between connections: reads then queue with the writes.
    if (path !== ':memory:' && path !== '') {
      const reader = new DatabaseSync(path, { readOnly: true });
      reader.exec('PRAGMA busy_timeout = 5000;');
      this.#reader = new Connection(reader);
    }
    this.#wal = new WalSync(path);
  }

  get<T>(sql: string, params: SqlParams = []): Promise<T | undefined> {
    const reader = this.#readConnection();
    if (reader) return settle(() => reader.get<T>(sql, params));
    return this.#write(() => this.#writer.get<T>(sql, params));
  }

  all<T>(sql: string, params: SqlParams = []): Promise<T[]> {
    const reader = this.#readConnection();
    if (reader) return settle(() => reader.all<T>(sql, params));
    return this.#write(() => this.#writer.all<T>(sql, params));
  }

  /**
   * Where a lone read runs at once: on the writer while no transaction holds it (its page cache is the
   * warm one: a second connection must drop its cached pages after every commit of the first, which made
   * reads between writes ~25% slower), else on the read-only connection. Undefined: queue with the writes.
   */
  #readConnection(): Connection | undefined {
    return this.#lock.held ? this.#reader : this.#writer;
  }

  run(sql: string, params: SqlParams = []): Promise<RunResult> {
    return this.#write(() => this.#writer.run(sql, params));
  }

  exec(sql: string): Promise<void> {
    return this.#write(() => this.#writer.exec(sql));
  }

  /**
   * Group commit of transactions: those asked for until the write lock is free and the event loop has
   * reached its next check phase run one after another in one SQLite transaction, each in a savepoint of
   * its own (one that fails rolls back alone), and all are answered after the one COMMIT. BEGIN and COMMIT
   * (the WAL's locks and frame writes) were a third of the server's SQLite time per small PUT. Nobody
   * learns a result before its commit, so what a caller sees is as if each had committed alone.
   */
  transaction<T>(fn: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    const nested = this.#nestedError();
    if (nested) return Promise.reject(nested);
    return new Promise<T>((resolve, reject) => {
      const item: BatchItem = { fn, resolve: resolve as (value: unknown) => void, reject };
      if (this.#batch) {
        this.#batch.push(item);
        return;
      }
      const batch = [item];
      this.#batch = batch;
      void this.#lock.run(async () => {
        await new Promise(setImmediate);
        this.#batch = undefined;
        await this.#runBatch(batch).catch((error: unknown) => {
          // A statement of the batch's own failed (a closed database): no transaction may stay open, and
          // rejecting one already answered changes nothing, so this reaches only those left waiting.
          try {
            if (this.#writer.isOpen && this.#writer.inTransaction) this.#writer.exec('ROLLBACK');
          } catch {
            // The connection is unusable: there is nothing left to roll back.
          }
          batch.forEach((b) => b.reject(error));
        });
      });
    });
  }

  async #runBatch(batch: BatchItem[]): Promise<void> {
    const writer = this.#writer;
    let pending = batch;
    while (pending.length > 0) {
      const alone = pending.length === 1;
      const settled: { item: BatchItem; ok: boolean; value: unknown }[] = [];
      try {
        writer.exec('BEGIN IMMEDIATE');
      } catch (error) {
        for (const item of pending) item.reject(error);
        return;
      }
      let rest: BatchItem[] = [];
      let lost: unknown;
      for (const [at, item] of pending.entries()) {
        const tx = new SqliteTransaction(writer, 0);
        if (!alone) writer.exec('SAVEPOINT batch_item');
        try {
          const value = await this.#inTransaction.run(true, () => item.fn(tx));
          tx.end();
          if (!alone) writer.exec('RELEASE batch_item');
          settled.push({ item, ok: true, value });
        } catch (error) {
          tx.end();
          settled.push({ item, ok: false, value: error });
          if (!writer.inTransaction) {
            // SQLite rolled the whole transaction back (a full disk, an I/O error): what the ones before
            // wrote is gone too. They fail with this error; the rest start a transaction of their own.
            lost = error;
            rest = pending.slice(at + 1);
            break;
          }
          if (alone) writer.exec('ROLLBACK');
          else writer.exec('ROLLBACK TO batch_item; RELEASE batch_item');
        }
      }
      if (lost === undefined && writer.inTransaction) {
        try {
          writer.exec('COMMIT');
        } catch (error) {
          if (writer.inTransaction) writer.exec('ROLLBACK');
          lost = error;
        }
      }
      for (const { item, ok, value } of settled) {
        if (!ok) item.reject(value);
        else if (lost !== undefined) item.reject(lost);
        else item.resolve(value);
      }
      pending = rest;
    }
  }

  durable(): Promise<void> {
    return this.#wal.durable(this.#writer.isOpen);
  }

  /** How many WAL syncs `durable()` has issued (benchmarks report syncs per write). */
  get walSyncs(): number {
    return this.#wal.syncs;
  }

  async close(): Promise<void> {
    // Let the writes already queued finish first; nothing new is accepted after close.
    await this.#lock.run(() => {
      this.#reader?.close();
      this.#writer.close();
    });
    this.#wal.close();
  }

  #write<T>(fn: () => T): Promise<T> {
    const nested = this.#nestedError();
    return nested ? Promise.reject(nested) : this.#lock.run(fn);
  }

  /** A write on the database from inside one of its own transactions would wait for itself forever. */
  #nestedError(): Error | undefined {
    if (!this.#inTransaction.getStore()) return undefined;
    return new Error('a statement on the database inside one of its transactions: use the transaction handle');
  }
}

interface BatchItem {
  fn: (tx: SqlTransaction) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

class SqliteTransaction implements SqlTransaction {
  readonly dialect = 'sqlite' as const;
  readonly #connection: Connection;
  readonly #depth: number;
  #open = true;

  constructor(connection: Connection, depth: number) {
    this.#connection = connection;
    this.#depth = depth;
  }

  get<T>(sql: string, params: SqlParams = []): Promise<T | undefined> {
    return settle(() => this.#live().get<T>(sql, params));
  }

  all<T>(sql: string, params: SqlParams = []): Promise<T[]> {
    return settle(() => this.#live().all<T>(sql, params));
  }

  run(sql: string, params: SqlParams = []): Promise<RunResult> {
    return settle(() => this.#live().run(sql, params));
  }

  exec(sql: string): Promise<void> {
    return settle(() => this.#live().exec(sql));
  }

  /** SQLite transactions already run one at a time (BEGIN IMMEDIATE under the write lock). */
  lock(): Promise<void> {
    return settle(() => void this.#live());
  }

  async transaction<T>(fn: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    const connection = this.#live();
    const name = `sp_${this.#depth + 1}`;
    const nested = new SqliteTransaction(connection, this.#depth + 1);
    connection.exec(`SAVEPOINT ${name}`);
    try {
      const result = await fn(nested);
      nested.end();
      connection.exec(`RELEASE ${name}`);
      return result;
    } catch (error) {
      nested.end();
      connection.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
      throw error;
    }
  }

  end(): void {
    this.#open = false;
  }

  #live(): Connection {
    // A handle kept past its callback would write outside any transaction: refuse loudly instead.
    if (!this.#open) throw new Error('this transaction has ended');
    return this.#connection;
  }
}

/** One node:sqlite connection with its statement cache. */
class Connection {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  get isOpen(): boolean {
    return this.#db.isOpen;
  }

  get inTransaction(): boolean {
    return this.#db.isTransaction;
  }

  get<T>(sql: string, params: SqlParams): T | undefined {
    return this.#prepare(sql).get(...(params as SQLInputValue[])) as T | undefined;
  }

  all<T>(sql: string, params: SqlParams): T[] {
    return this.#prepare(sql).all(...(params as SQLInputValue[])) as T[];
  }

  run(sql: string, params: SqlParams): RunResult {
    const result = this.#prepare(sql).run(...(params as SQLInputValue[]));
    return { changes: Number(result.changes) };
  }

  exec(sql: string): void {
    this.#db.exec(sql);
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
}

/** Runs a synchronous statement as a promise, so its errors reject instead of throwing at the call. */
function settle<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(error as Error);
  }
}
