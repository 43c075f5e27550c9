import type { SchemaMigration } from '../db/index.ts';

/**
 * accounts/0001_initial on PostgreSQL: e-mail addresses are unique whatever their case (SQLite's
 * COLLATE NOCASE) through a unique index on lower(email); the store looks them up the same way.
 */
const POSTGRES_INITIAL = `
  CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    type TEXT NOT NULL DEFAULT 'standard',
    created_on TEXT NOT NULL
  );
  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    api_key_hash TEXT,
    created_on TEXT NOT NULL,
    modified_on TEXT NOT NULL
  );
  CREATE UNIQUE INDEX users_email_lower ON users (lower(email));
  CREATE TABLE memberships (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    roles TEXT NOT NULL DEFAULT '["Administrator"]',
    status TEXT NOT NULL DEFAULT 'accepted',
    created_on TEXT NOT NULL,
    UNIQUE (account_id, user_id)
  );
  CREATE INDEX memberships_user ON memberships(user_id);
  CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    account_id TEXT REFERENCES accounts(id) ON DELETE CASCADE,
    read_only INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'active',
    not_before TEXT,
    expires_on TEXT,
    created_on TEXT NOT NULL
  );
`;

export const accountMigrations: readonly SchemaMigration[] = [
  {
    id: 'accounts/0001_initial',
    sql: {
      sqlite: `
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        type TEXT NOT NULL DEFAULT 'standard',
        created_on TEXT NOT NULL
      );
      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
        api_key_hash TEXT,
        created_on TEXT NOT NULL,
        modified_on TEXT NOT NULL
      );
      CREATE TABLE memberships (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        roles TEXT NOT NULL DEFAULT '["Administrator"]',
        status TEXT NOT NULL DEFAULT 'accepted',
        created_on TEXT NOT NULL,
        UNIQUE (account_id, user_id)
      );
      CREATE INDEX memberships_user ON memberships(user_id);
      CREATE TABLE api_tokens (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        account_id TEXT REFERENCES accounts(id) ON DELETE CASCADE,
        read_only INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL DEFAULT 'active',
        not_before TEXT,
        expires_on TEXT,
        created_on TEXT NOT NULL
      );
    `,
      postgres: POSTGRES_INITIAL,
    },
  },
  {
    // PATCH /user: the profile fields of Cloudflare's user object.
    id: 'accounts/0002_user_profile',
    sql: `
      ALTER TABLE users ADD COLUMN first_name TEXT;
      ALTER TABLE users ADD COLUMN last_name TEXT;
      ALTER TABLE users ADD COLUMN telephone TEXT;
      ALTER TABLE users ADD COLUMN country TEXT;
      ALTER TABLE users ADD COLUMN zipcode TEXT;
    `,
  },
  {
    // A token's `condition` (request_ip in / not_in), as JSON: enforced on every door the token opens.
    id: 'accounts/0003_token_condition',
    sql: `ALTER TABLE api_tokens ADD COLUMN request_condition TEXT;`,
  },
];
