import type { SchemaMigration } from '../db/index.ts';

/**
 * Workers routes (a pattern in a zone -> a script, or no script) and Custom Domains (a hostname of a zone ->
 * a script). A pattern is unique in its zone and a hostname across the platform: the traffic port serves one
 * place per hostname. Scripts are named, not referenced: a route outlives nothing, the service removes a
 * deleted script's routes and domains itself.
 */
export const workerRouteMigrations: readonly SchemaMigration[] = [
  {
    id: 'worker-routes/0001_initial',
    sql: `
      CREATE TABLE worker_routes (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        zone_id TEXT NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
        pattern TEXT NOT NULL,
        script TEXT,
        created_on TEXT NOT NULL,
        UNIQUE (zone_id, pattern)
      );
      CREATE INDEX worker_routes_script ON worker_routes(account_id, script);
      CREATE TABLE worker_domains (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        zone_id TEXT NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
        hostname TEXT NOT NULL UNIQUE,
        service TEXT NOT NULL,
        environment TEXT NOT NULL,
        created_on TEXT NOT NULL
      );
      CREATE INDEX worker_domains_account ON worker_domains(account_id, hostname);
    `,
  },
];
