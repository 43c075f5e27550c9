import { join } from 'node:path';
import { inject } from 'vitest';
import { PostgresDatabase, SqliteDatabase, type DialectName, type SqlDatabase } from '../../src/db/index.ts';
import { createTestDatabase } from './postgres-server.ts';
import { tempDir } from './ledge.ts';

/** Both implementations of the persistence contract: conformance suites run on each. */
export const BACKENDS: readonly DialectName[] = ['sqlite', 'postgres'];

/** Which backend the servers of this test run use: the `postgres` vitest project sets LEDGE_TEST_DATABASE. */
export const serverBackend = (): DialectName =>
  process.env['LEDGE_TEST_DATABASE'] === 'postgres' ? 'postgres' : 'sqlite';

/** A fresh, empty database URL on the run's PostgreSQL cluster (dropped by `drop`). */
export function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  return createTestDatabase(inject('postgresAdminUrl'));
}

export interface TestDatabase {
  db: SqlDatabase;
  /** Another handle on the same database (a second node, or a second process's view). */
  reopen(): SqlDatabase;
  close(): Promise<void>;
}

/** A fresh database of the given backend: a SQLite file in a temp dir, or a new PostgreSQL database. */
export async function openTestDatabase(backend: DialectName): Promise<TestDatabase> {
  const handles: SqlDatabase[] = [];
  if (backend === 'sqlite') {
    // One handle per file and process: a second connection's lock wait would block this event loop
    // (node:sqlite waits synchronously), and SQLite is the one-node backend anyway.
    const db = new SqliteDatabase(join(tempDir('ledge-db-'), 'ledge.db'));
    handles.push(db);
    return { db, reopen: () => db, close: () => closeAll(handles) };
  }
  const database = await freshPostgresDatabase();
  const reopen = () => {
    const db = new PostgresDatabase(database.url, { maxConnections: 4 });
    handles.push(db);
    return db;
  };
  return {
    db: reopen(),
    reopen,
    async close() {
      await closeAll(handles);
      await database.drop();
    },
  };
}

async function closeAll(handles: SqlDatabase[]): Promise<void> {
  await Promise.all(handles.splice(0).map((db) => db.close()));
}
