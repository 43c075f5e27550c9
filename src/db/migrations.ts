import type { Database } from './database.ts';

/**
 * A versioned schema change. `id` is unique across the platform and namespaced by subsystem
 * (`accounts/0001_initial`); once released, a migration is never edited, only followed by a new one.
 */
export interface Migration {
  id: string;
  sql: string;
}

/** Applies, in order, every migration not yet recorded; each one in its own transaction. */
export function migrate(db: Database, migrations: readonly Migration[]): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`);
  const applied = new Set(db.all<{ id: string }>('SELECT id FROM schema_migrations').map((row) => row.id));
  const ran: string[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.id)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.run('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)', [migration.id, new Date().toISOString()]);
    });
    ran.push(migration.id);
  }
  return ran;
}
