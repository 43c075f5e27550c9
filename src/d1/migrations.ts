import type { SchemaMigration } from '../db/index.ts';

/**
 * D1 databases: the record Ledge keeps of each (its data lives in the account's engine, see engine.ts).
 * Names are unique within an account, as on Cloudflare; ids are UUIDs, never reused, so a deleted
 * database's id cannot reach a new one's data.
 */
export const d1Migrations: readonly SchemaMigration[] = [
  {
    id: 'd1/0001_databases',
    sql: `
      CREATE TABLE d1_databases (
        uuid TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        jurisdiction TEXT,
        primary_location_hint TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (account_id, name)
      );
    `,
  },
];
