import type { SchemaMigration } from '../db/index.ts';

/**
 * Public access to buckets: the managed public URL toggle per bucket, and custom domains (a hostname in a
 * zone of the bucket's account, unique across the platform since the traffic port routes by Host). Both go
 * with their bucket; a custom domain also goes with its zone. After storage's and zones' migrations.
 */
export const r2Migrations: readonly SchemaMigration[] = [
  {
    id: 'r2/0001_public_domains',
    sql: {
      sqlite: `
      CREATE TABLE r2_managed_domains (
        bucket_id TEXT PRIMARY KEY REFERENCES r2_buckets(id) ON DELETE CASCADE,
        enabled INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE r2_custom_domains (
        domain TEXT PRIMARY KEY,
        bucket_id TEXT NOT NULL REFERENCES r2_buckets(id) ON DELETE CASCADE,
        zone_id TEXT NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
        enabled INTEGER NOT NULL,
        min_tls TEXT,
        ciphers TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX r2_custom_domains_bucket ON r2_custom_domains(bucket_id, domain);
    `,
      postgres: `
      CREATE TABLE r2_managed_domains (
        bucket_id TEXT PRIMARY KEY REFERENCES r2_buckets(id) ON DELETE CASCADE,
        enabled INTEGER NOT NULL,
        updated_at BIGINT NOT NULL
      );
      CREATE TABLE r2_custom_domains (
        domain TEXT COLLATE "C" PRIMARY KEY,
        bucket_id TEXT NOT NULL REFERENCES r2_buckets(id) ON DELETE CASCADE,
        zone_id TEXT NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
        enabled INTEGER NOT NULL,
        min_tls TEXT,
        ciphers TEXT,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX r2_custom_domains_bucket ON r2_custom_domains(bucket_id, domain);
    `,
    },
  },
];
