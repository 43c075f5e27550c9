import type { Migration } from '../db/index.ts';

/**
 * Zones: a hostname owned by an account. Names are unique across the platform, not per account,
 * because the traffic listener routes by Host and one hostname can lead to one place only.
 */
export const zoneMigrations: readonly Migration[] = [
  {
    id: 'zones/0001_initial',
    sql: `
      CREATE TABLE zones (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL,
        type TEXT NOT NULL,
        created_on TEXT NOT NULL,
        modified_on TEXT NOT NULL
      );
      CREATE INDEX zones_account ON zones(account_id, name, id);
    `,
  },
];
