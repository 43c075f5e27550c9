import type { SchemaMigration } from '../db/index.ts';

/**
 * TLS: certificates served on the traffic TLS port (uploaded ones and ACME's; private keys sealed with the
 * server's secret key), ACME orders per hostname with their last error and next attempt, pending challenges
 * (every node answers them), the installation's ACME account, and the zones' TLS settings.
 */
export const tlsMigrations: readonly SchemaMigration[] = [
  {
    id: 'tls/0001_initial',
    sql: `
      CREATE TABLE tls_certificates (
        id TEXT PRIMARY KEY,
        zone_id TEXT NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
        source TEXT NOT NULL,
        hosts TEXT NOT NULL,
        certificate TEXT NOT NULL,
        sealed_key TEXT NOT NULL,
        issuer TEXT NOT NULL,
        signature TEXT NOT NULL,
        bundle_method TEXT NOT NULL,
        priority INTEGER NOT NULL,
        expires_on TEXT NOT NULL,
        uploaded_on TEXT NOT NULL,
        modified_on TEXT NOT NULL
      );
      CREATE INDEX tls_certificates_zone ON tls_certificates(zone_id, id);
      CREATE TABLE tls_acme_orders (
        hostname TEXT PRIMARY KEY,
        zone_id TEXT NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
        status TEXT NOT NULL,
        certificate_id TEXT,
        last_error TEXT,
        failures INTEGER NOT NULL,
        next_attempt_on TEXT NOT NULL,
        modified_on TEXT NOT NULL
      );
      CREATE TABLE tls_acme_challenges (
        hostname TEXT NOT NULL,
        kind TEXT NOT NULL,
        token TEXT NOT NULL,
        key_authorization TEXT NOT NULL,
        sealed_material TEXT,
        created_on TEXT NOT NULL,
        PRIMARY KEY (hostname, kind, token)
      );
      CREATE TABLE tls_acme_account (
        directory_url TEXT PRIMARY KEY,
        sealed_key TEXT NOT NULL,
        account_url TEXT NOT NULL,
        created_on TEXT NOT NULL
      );
      CREATE TABLE tls_zone_settings (
        zone_id TEXT NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        value TEXT NOT NULL,
        modified_on TEXT NOT NULL,
        PRIMARY KEY (zone_id, name)
      );
    `,
  },
];
