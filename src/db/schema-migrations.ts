import type { DialectName, SqlDatabase } from './sql.ts';
import type { Clock } from '../shared/clock.ts';
import { isoNow } from '../shared/time.ts';

/**
 * A versioned schema change. `id` is unique across the platform and namespaced by subsystem
 * (`accounts/0001_initial`); once released, a migration is never edited, only followed by a new one.
 * `sql` is one script for both dialects, or one per dialect where their DDL differs.
 */
export interface SchemaMigration {
  id: string;
  sql: string | Record<DialectName, string>;
}

/** Serialises nodes that start together: the first migrates, the others find the work done. */
const MIGRATION_LOCK = 'ledge:schema-migrations';

/**
 * Applies, in order, every migration not yet recorded, each in its own transaction under one
 * cluster-wide lock, and returns the ids it applied.
 */
export async function applyMigrations(
  db: SqlDatabase,
  migrations: readonly SchemaMigration[],
  /** Stamps each migration's `applied_at`. */
  clock: Clock,
): Promise<string[]> {
  await db.transaction(async (tx) => {
    await tx.lock(MIGRATION_LOCK);
    await tx.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
  });
  const ran: string[] = [];
  for (const migration of migrations) {
    const applied = await db.transaction(async (tx) => {
      await tx.lock(MIGRATION_LOCK);
      // Checked again under the lock: another node may have applied it since we last looked.
      if (await tx.get('SELECT id FROM schema_migrations WHERE id = ?', [migration.id])) return false;
      await tx.exec(typeof migration.sql === 'string' ? migration.sql : migration.sql[db.dialect]);
      await tx.run('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)', [migration.id, isoNow(clock)]);
      return true;
    });
    if (applied) ran.push(migration.id);
  }
  return ran;
}
