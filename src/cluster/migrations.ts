import type { SchemaMigration } from '../db/index.ts';

/** Nodes that share one database, and the leases they take for work only one of them may do at a time. */
export const clusterMigrations: readonly SchemaMigration[] = [
  {
    id: 'cluster/0001_nodes_and_leases',
    sql: {
      sqlite: `
        CREATE TABLE cluster_nodes (
          id TEXT PRIMARY KEY,
          started_at INTEGER NOT NULL,
          heartbeat_at INTEGER NOT NULL
        );
        CREATE TABLE cluster_leases (
          name TEXT PRIMARY KEY,
          holder TEXT NOT NULL,
          expires_at INTEGER NOT NULL
        );`,
      postgres: `
        CREATE TABLE cluster_nodes (
          id TEXT PRIMARY KEY,
          started_at BIGINT NOT NULL,
          heartbeat_at BIGINT NOT NULL
        );
        CREATE TABLE cluster_leases (
          name TEXT PRIMARY KEY,
          holder TEXT NOT NULL,
          expires_at BIGINT NOT NULL
        );`,
    },
  },
];
