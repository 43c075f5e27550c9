import type { Database } from './database.ts';
import type { SchemaMigration } from './schema-migrations.ts';

/** @deprecated the name before both dialects: use SchemaMigration. */
export type Migration = SchemaMigration;

/**
 * Applies, in order, every migration not yet recorded; each one in its own transaction.
 * @deprecated the synchronous SQLite path, kept while stores move to `applyMigrations` on SqlDatabase.
 */
export function migrate(db: Database, migrations: readonly SchemaMigration[]): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`);
  const applied = new Set(db.all<{ id: string }>('SELECT id FROM schema_migrations').map((row) => row.id));
  const ran: string[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.id)) continue;
    db.transaction(() => {
      db.exec(typeof migration.sql === 'string' ? migration.sql : migration.sql.sqlite);
      db.run('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)', [migration.id, new Date().toISOString()]);
    });
    ran.push(migration.id);
  }
  return ran;
}
