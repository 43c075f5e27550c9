import type { SchemaMigration } from '../db/index.ts';

/**
 * Workers KV namespaces: the records that say which namespaces an account has and their titles. The keys and
 * values themselves live in the account's engines process (workerd's bundled KV engine, src/workerd/engine-host.ts).
 */
export const kvMigrations: readonly SchemaMigration[] = [
  {
    id: 'kv/0001_namespaces',
    sql: {
      sqlite: `
      CREATE TABLE kv_namespaces (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        title TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (account_id, title)
      );
    `,
      postgres: `
      CREATE TABLE kv_namespaces (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        title TEXT COLLATE "C" NOT NULL,
        created_at BIGINT NOT NULL,
        UNIQUE (account_id, title)
      );
    `,
    },
  },
];
