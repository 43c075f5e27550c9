import { fromSqlBool, toSqlBool, type DialectName, type SqlDatabase, type SqlExecutor } from '../db/index.ts';
import type { TokenCondition } from '../shared/principal.ts';
import type { Account, ApiToken, Membership, User, UserProfile } from './types.ts';
import { isoNow } from '../shared/time.ts';
import type { Clock } from '../shared/clock.ts';

/** What the first start writes at once: the owner's account, user, membership and token. */
export interface OwnerRecords {
  account: Account;
  user: User;
  apiKeyHash: string;
  membership: NewMembership;
  token: ApiToken;
  tokenHash: string;
}

export interface NewMembership {
  id: string;
  account_id: string;
  user_id: string;
  roles: string[];
  status?: string;
  created_on: string;
}

/** Persistence of accounts, users, memberships and API tokens (SQLite or PostgreSQL: `SqlAccountStore`). */
export interface AccountStore {
  countAccounts(): Promise<number>;
  /** False when an account with this id exists already. */
  insertAccount(account: Account): Promise<boolean>;
  /**
   * Writes the owner's records in one transaction if no account exists yet; false when one does (another
   * node sharing the database bootstrapped first). Never leaves a half-made owner.
   */
  insertOwnerIfEmpty(owner: OwnerRecords): Promise<boolean>;
  getAccount(id: string): Promise<Account | undefined>;
  renameAccount(id: string, name: string): Promise<void>;
  /** False when a user with this e-mail (in any case) exists already. */
  insertUser(user: User, apiKeyHash: string | null): Promise<boolean>;
  getUserById(id: string): Promise<User | undefined>;
  getUserByEmail(email: string): Promise<(User & { api_key_hash: string | null }) | undefined>;
  setUserApiKeyHash(userId: string, apiKeyHash: string): Promise<void>;
  /** Sets the given profile fields (a missing field keeps its value) and bumps modified_on. */
  updateUserProfile(userId: string, profile: Partial<UserProfile>, modifiedOn: string): Promise<void>;
  /** False when the user is a member of that account already. */
  insertMembership(membership: NewMembership): Promise<boolean>;
  /** Memberships of a user, ordered by account name then id (stable pages). */
  listMemberships(userId: string): Promise<Membership[]>;
  getMembership(id: string): Promise<Membership | undefined>;
  setMembershipStatus(id: string, status: string): Promise<void>;
  /**
   * Removes a membership unless it is the last accepted one with an Administrator role in its account
   * (checked and done in one transaction, so two members leaving at once cannot both succeed).
   */
  deleteMembershipUnlessLastAdmin(id: string): Promise<'deleted' | LastAdminOutcome | 'missing'>;
  /** The earliest user and its first account: who a single-tenant server belongs to. */
  firstMembership(): Promise<{ email: string; account_id: string } | undefined>;
  insertToken(token: ApiToken, tokenHash: string): Promise<void>;
  getTokenByHash(tokenHash: string): Promise<(ApiToken & { token_hash: string }) | undefined>;
  /** A token by its id (the S3 Access Key ID of its key pair), with its hash (the pair's secret). */
  getTokenById(id: string): Promise<(ApiToken & { token_hash: string }) | undefined>;
  /** A user's tokens, oldest first. */
  listTokens(userId: string): Promise<ApiToken[]>;
  /** A new value for a token (its hash): the old value stops working at once. */
  setTokenHash(id: string, tokenHash: string): Promise<void>;
  deleteToken(id: string): Promise<void>;
  /** The members of an account with their users' e-mails, oldest first. */
  listAccountMembers(accountId: string): Promise<AccountMember[]>;
  /**
   * Sets a membership's roles unless that takes the Administrator role from the account's last accepted
   * administrator (checked and done in one transaction, like deleteMembershipUnlessLastAdmin).
   */
  setMembershipRolesUnlessLastAdmin(id: string, roles: string[]): Promise<'updated' | LastAdminOutcome | 'missing'>;
}

/** A membership seen from its account: who the member is. */
export interface AccountMember extends Membership {
  email: string;
}

const PROFILE_COLUMNS = ['first_name', 'last_name', 'telephone', 'country', 'zipcode'] as const;

const MEMBERSHIP_SELECT = `SELECT m.id, m.account_id, a.name AS account_name, a.type AS account_type, m.user_id, m.roles, m.status, m.created_on
   FROM memberships m JOIN accounts a ON a.id = m.account_id`;

interface MembershipRow {
  id: string;
  account_id: string;
  account_name: string;
  account_type: string;
  user_id: string;
  roles: string;
  status: string;
  created_on: string;
}

function toMembership(row: MembershipRow): Membership {
  return {
    id: row.id,
    account: { id: row.account_id, name: row.account_name, type: row.account_type },
    user_id: row.user_id,
    roles: JSON.parse(row.roles) as string[],
    status: row.status,
    created_on: row.created_on,
  };
}

/** Who can run an account: an accepted member with an Administrator role (Cloudflare's role names). */
export function isAcceptedAdmin(membership: Membership): boolean {
  return membership.status === 'accepted' && membership.roles.some((role) => /administrator/i.test(role));
}

/** An accepted Super Administrator: the only one who may grant, take or remove that role. */
export function isAcceptedSuperAdmin(membership: Membership): boolean {
  return membership.status === 'accepted' && membership.roles.some((role) => /^super administrator/i.test(role));
}

/** Why a change to a membership is refused: it would take the account's last (super) administrator. */
export type LastAdminOutcome = 'last_admin' | 'last_super_admin';

/**
 * Whether changing `before` into `after` (undefined: removing it) takes away the last accepted Super
 * Administrator or the last accepted administrator of its account, `others` being its other members.
 */
function orphans(
  before: Membership,
  after: Membership | undefined,
  others: Membership[],
): LastAdminOutcome | undefined {
  for (const [holds, outcome] of [
    [isAcceptedSuperAdmin, 'last_super_admin'],
    [isAcceptedAdmin, 'last_admin'],
  ] as const) {
    if (holds(before) && !(after && holds(after)) && !others.some(holds)) return outcome;
  }
  return undefined;
}

interface TokenRow extends Omit<ApiToken, 'read_only' | 'condition'> {
  read_only: number;
  /** The token's `condition` as JSON, or null. */
  request_condition: string | null;
  token_hash: string;
}

/** Looks a user up by e-mail whatever its case: SQLite's column is COLLATE NOCASE, PostgreSQL indexes lower(email). */
const EMAIL_MATCHES: Record<DialectName, string> = {
  sqlite: 'email = ?',
  postgres: 'lower(email) = lower(?)',
};

/** Serialises first starts of several nodes on one database: one of them bootstraps. */
const BOOTSTRAP_LOCK = 'accounts:bootstrap';

/** The AccountStore on the persistence contract, for both dialects. */
export class SqlAccountStore implements AccountStore {
  readonly #db: SqlDatabase;
  readonly #clock: Clock;

  constructor(db: SqlDatabase, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async countAccounts(): Promise<number> {
    return Number((await this.#db.get<{ n: number }>('SELECT COUNT(*) AS n FROM accounts'))?.n ?? 0);
  }

  async insertAccount(account: Account): Promise<boolean> {
    return (await insertAccount(this.#db, account)).changes === 1;
  }

  async insertOwnerIfEmpty(owner: OwnerRecords): Promise<boolean> {
    return this.#db.transaction(async (tx) => {
      await tx.lock(BOOTSTRAP_LOCK);
      if (await tx.get('SELECT 1 AS one FROM accounts LIMIT 1')) return false;
      await insertAccount(tx, owner.account);
      await insertUser(tx, owner.user, owner.apiKeyHash);
      await insertMembership(tx, owner.membership);
      await insertToken(tx, owner.token, owner.tokenHash);
      return true;
    });
  }

  getAccount(id: string): Promise<Account | undefined> {
    return this.#db.get<Account>('SELECT id, name, type, created_on FROM accounts WHERE id = ?', [id]);
  }

  async renameAccount(id: string, name: string): Promise<void> {
    await this.#db.run('UPDATE accounts SET name = ? WHERE id = ?', [name, id]);
  }

  async insertUser(user: User, apiKeyHash: string | null): Promise<boolean> {
    return (await insertUser(this.#db, user, apiKeyHash)).changes === 1;
  }

  getUserById(id: string): Promise<User | undefined> {
    return this.#db.get<User>(
      `SELECT id, email, first_name, last_name, telephone, country, zipcode, created_on, modified_on
         FROM users WHERE id = ?`,
      [id],
    );
  }

  async updateUserProfile(userId: string, profile: Partial<UserProfile>, modifiedOn: string): Promise<void> {
    // Column names come from this fixed list, never from the request.
    const columns = PROFILE_COLUMNS.filter((column) => profile[column] !== undefined);
    const assignments = [...columns.map((column) => `${column} = ?`), 'modified_on = ?'].join(', ');
    await this.#db.run(`UPDATE users SET ${assignments} WHERE id = ?`, [
      ...columns.map((column) => profile[column] ?? null),
      modifiedOn,
      userId,
    ]);
  }

  getUserByEmail(email: string): Promise<(User & { api_key_hash: string | null }) | undefined> {
    return this.#db.get(
      `SELECT id, email, api_key_hash, created_on, modified_on FROM users WHERE ${EMAIL_MATCHES[this.#db.dialect]}`,
      [email],
    );
  }

  async setUserApiKeyHash(userId: string, apiKeyHash: string): Promise<void> {
    await this.#db.run('UPDATE users SET api_key_hash = ?, modified_on = ? WHERE id = ?', [
      apiKeyHash,
      isoNow(this.#clock),
      userId,
    ]);
  }

  async insertMembership(membership: NewMembership): Promise<boolean> {
    return (await insertMembership(this.#db, membership)).changes === 1;
  }

  async listMemberships(userId: string): Promise<Membership[]> {
    const rows = await this.#db.all<MembershipRow>(`${MEMBERSHIP_SELECT} WHERE m.user_id = ? ORDER BY a.name, a.id`, [
      userId,
    ]);
    return rows.map(toMembership);
  }

  async getMembership(id: string): Promise<Membership | undefined> {
    const row = await this.#db.get<MembershipRow>(`${MEMBERSHIP_SELECT} WHERE m.id = ?`, [id]);
    return row && toMembership(row);
  }

  async setMembershipStatus(id: string, status: string): Promise<void> {
    await this.#db.run('UPDATE memberships SET status = ? WHERE id = ?', [status, id]);
  }

  async deleteMembershipUnlessLastAdmin(id: string): Promise<'deleted' | LastAdminOutcome | 'missing'> {
    return this.#db.transaction(async (tx) => {
      const found = await tx.get<{ account_id: string }>('SELECT account_id FROM memberships WHERE id = ?', [id]);
      if (!found) return 'missing';
      // Two administrators leaving at once: each checks the other is still there, so they take turns.
      await tx.lock(`accounts:members:${found.account_id}`);
      const row = await tx.get<MembershipRow>(`${MEMBERSHIP_SELECT} WHERE m.id = ?`, [id]);
      if (!row) return 'missing';
      if (isAcceptedAdmin(toMembership(row))) {
        const others = await tx.all<MembershipRow>(`${MEMBERSHIP_SELECT} WHERE m.account_id = ? AND m.id != ?`, [
          row.account_id,
          id,
        ]);
        const refused = orphans(toMembership(row), undefined, others.map(toMembership));
        if (refused) return refused;
      }
      await tx.run('DELETE FROM memberships WHERE id = ?', [id]);
      return 'deleted';
    });
  }

  firstMembership(): Promise<{ email: string; account_id: string } | undefined> {
    return this.#db.get(
      `SELECT u.email, m.account_id FROM users u JOIN memberships m ON m.user_id = u.id
        ORDER BY u.created_on, m.created_on LIMIT 1`,
    );
  }

  async insertToken(token: ApiToken, tokenHash: string): Promise<void> {
    await insertToken(this.#db, token, tokenHash);
  }

  async getTokenByHash(tokenHash: string): Promise<(ApiToken & { token_hash: string }) | undefined> {
    const row = await this.#db.get<TokenRow>(
      `SELECT id, user_id, name, token_hash, account_id, read_only, status, not_before, expires_on, created_on,
              request_condition
         FROM api_tokens WHERE token_hash = ?`,
      [tokenHash],
    );
    return row ? fromTokenRow(row) : undefined;
  }

  async listTokens(userId: string): Promise<ApiToken[]> {
    const rows = await this.#db.all<TokenRow>(
      `SELECT id, user_id, name, token_hash, account_id, read_only, status, not_before, expires_on, created_on,
              request_condition
         FROM api_tokens WHERE user_id = ? ORDER BY created_on, id`,
      [userId],
    );
    return rows.map((row) => {
      const { token_hash: _hash, ...token } = fromTokenRow(row);
      return token;
    });
  }

  async setTokenHash(id: string, tokenHash: string): Promise<void> {
    await this.#db.run('UPDATE api_tokens SET token_hash = ? WHERE id = ?', [tokenHash, id]);
  }

  async deleteToken(id: string): Promise<void> {
    await this.#db.run('DELETE FROM api_tokens WHERE id = ?', [id]);
  }

  async listAccountMembers(accountId: string): Promise<AccountMember[]> {
    const rows = await this.#db.all<MembershipRow & { email: string }>(
      `SELECT m.id, m.account_id, a.name AS account_name, a.type AS account_type, m.user_id, m.roles, m.status,
              m.created_on, u.email
         FROM memberships m JOIN accounts a ON a.id = m.account_id JOIN users u ON u.id = m.user_id
        WHERE m.account_id = ? ORDER BY m.created_on, m.id`,
      [accountId],
    );
    return rows.map((row) => ({ ...toMembership(row), email: row.email }));
  }

  async setMembershipRolesUnlessLastAdmin(
    id: string,
    roles: string[],
  ): Promise<'updated' | LastAdminOutcome | 'missing'> {
    return this.#db.transaction(async (tx) => {
      const found = await tx.get<{ account_id: string }>('SELECT account_id FROM memberships WHERE id = ?', [id]);
      if (!found) return 'missing';
      await tx.lock(`accounts:members:${found.account_id}`);
      const row = await tx.get<MembershipRow>(`${MEMBERSHIP_SELECT} WHERE m.id = ?`, [id]);
      if (!row) return 'missing';
      const before = toMembership(row);
      if (isAcceptedAdmin(before)) {
        const others = await tx.all<MembershipRow>(`${MEMBERSHIP_SELECT} WHERE m.account_id = ? AND m.id != ?`, [
          row.account_id,
          id,
        ]);
        const refused = orphans(before, { ...before, roles }, others.map(toMembership));
        if (refused) return refused;
      }
      await tx.run('UPDATE memberships SET roles = ? WHERE id = ?', [JSON.stringify(roles), id]);
      return 'updated';
    });
  }

  async getTokenById(id: string): Promise<(ApiToken & { token_hash: string }) | undefined> {
    const row = await this.#db.get<TokenRow>(
      `SELECT id, user_id, name, token_hash, account_id, read_only, status, not_before, expires_on, created_on,
              request_condition
         FROM api_tokens WHERE id = ?`,
      [id],
    );
    return row ? fromTokenRow(row) : undefined;
  }
}

// The inserts, on the database or inside a transaction (the owner's records go in one).

function insertAccount(db: SqlExecutor, account: Account) {
  return db.run('INSERT INTO accounts (id, name, type, created_on) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING', [
    account.id,
    account.name,
    account.type,
    account.created_on,
  ]);
}

function insertUser(db: SqlExecutor, user: User, apiKeyHash: string | null) {
  // No conflict target: the e-mail's unique constraint is an index on lower(email) on PostgreSQL.
  return db.run(
    `INSERT INTO users (id, email, api_key_hash, created_on, modified_on) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT DO NOTHING`,
    [user.id, user.email, apiKeyHash, user.created_on, user.modified_on],
  );
}

function insertMembership(db: SqlExecutor, m: NewMembership) {
  return db.run(
    `INSERT INTO memberships (id, account_id, user_id, roles, status, created_on) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (account_id, user_id) DO NOTHING`,
    [m.id, m.account_id, m.user_id, JSON.stringify(m.roles), m.status ?? 'accepted', m.created_on],
  );
}

function insertToken(db: SqlExecutor, token: ApiToken, tokenHash: string) {
  return db.run(
    `INSERT INTO api_tokens (id, user_id, name, token_hash, account_id, read_only, status, not_before, expires_on, created_on, request_condition)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      token.id,
      token.user_id,
      token.name,
      tokenHash,
      token.account_id,
      toSqlBool(token.read_only),
      token.status,
      token.not_before,
      token.expires_on,
      token.created_on,
      token.condition ? JSON.stringify(token.condition) : null,
    ],
  );
}

function fromTokenRow(row: TokenRow): ApiToken & { token_hash: string } {
  const { request_condition: condition, read_only: readOnly, ...rest } = row;
  return {
    ...rest,
    read_only: fromSqlBool(readOnly),
    condition: condition ? (JSON.parse(condition) as TokenCondition) : null,
  };
}
