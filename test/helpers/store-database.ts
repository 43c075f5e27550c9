import { applyMigrations, type DialectName, type SchemaMigration, type SqlDatabase } from '../../src/db/index.ts';
import { loadBalancingMigrations } from '../../src/load-balancing/index.ts';
import { notificationMigrations } from '../../src/notifications/index.ts';
import { zoneMigrations } from '../../src/zones/index.ts';
import { openTestDatabase, type TestDatabase } from './backends.ts';
import { systemClock } from '../../src/shared/clock.ts';

/** The accounts table the zone, load-balancing and notification tables refer to (its store is tested elsewhere). */
const ACCOUNTS: SchemaMigration = {
  id: 'test/accounts',
  sql: 'CREATE TABLE accounts (id TEXT PRIMARY KEY, name TEXT NOT NULL)',
};

export const ACCOUNT = 'a'.repeat(32);
export const OTHER_ACCOUNT = 'b'.repeat(32);

/**
 * A fresh database of `backend` with the load-balancing and notification schema and two accounts, for
 * the conformance suites of those stores. `reopen()` is a second handle (a second node on PostgreSQL).
 */
export async function openStoreDatabase(backend: DialectName): Promise<TestDatabase & { db: SqlDatabase }> {
  const test = await openTestDatabase(backend);
  await applyMigrations(
    test.db,
    [ACCOUNTS, ...zoneMigrations, ...loadBalancingMigrations, ...notificationMigrations],
    systemClock,
  );
  for (const id of [ACCOUNT, OTHER_ACCOUNT])
    await test.db.run('INSERT INTO accounts (id, name) VALUES (?, ?)', [id, `account ${id[0]}`]);
  return test;
}
