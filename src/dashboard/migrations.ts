import type { SchemaMigration } from '../db/index.ts';

/** Dashboard sessions and sign-in links in the shared database, so every node knows them (src/dashboard/sessions.ts). */
export const dashboardMigrations: readonly SchemaMigration[] = [
  {
    id: 'dashboard/0001_sessions',
    sql: `
      CREATE TABLE dashboard_sessions (
        id_hash TEXT PRIMARY KEY,
        sealed TEXT NOT NULL,
        expires_at BIGINT NOT NULL,
        absolute_expires_at BIGINT NOT NULL
      );
      CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions(expires_at);
      CREATE TABLE dashboard_links (
        code_hash TEXT PRIMARY KEY,
        sealed TEXT NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE INDEX dashboard_links_expiry ON dashboard_links(expires_at);`,
  },
];
