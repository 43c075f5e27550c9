import { fromSqlBool, toSqlBool, type Database } from '../db/index.ts';
import type { Account, ApiToken, Membership, User, UserProfile } from './types.ts';

/** Persistence of accounts, users, memberships and API tokens. Async so another backend can replace it. */
export interface AccountStore {
  countAccounts(): Promise<number>;
  insertAccount(account: Account): Promise<void>;
  getAccount(id: string): Promise<Account | undefined>;
  renameAccount(id: string, name: string): Promise<void>;
  insertUser(user: User, apiKeyHash: string | null): Promise<void>;
  getUserById(id: string): Promise<User | undefined>;
  getUserByEmail(email: string): Promise<(User & { api_key_hash: string | null }) | undefined>;
  setUserApiKeyHash(userId: string, apiKeyHash: string): Promise<void>;
  /** Sets the given profile fields (a missing field keeps its value) and bumps modified_on. */
  updateUserProfile(userId: string, profile: Partial<UserProfile>, modifiedOn: string): Promise<void>;
  insertMembership(membership: {
    id: string;
    account_id: string;
    user_id: string;
    roles: string[];
    status?: string;
    created_on: string;
  }): Promise<void>;
  /** Memberships of a user, ordered by account name then id (stable pages). */
  listMemberships(userId: string): Promise<Membership[]>;
  getMembership(id: string): Promise<Membership | undefined>;
  setMembershipStatus(id: string, status: string): Promise<void>;
  /**
   * Removes a membership unless it is the last accepted one with an Administrator role in its account
   * (checked and done in one transaction, so two members leaving at once cannot both succeed).
   */
  deleteMembershipUnlessLastAdmin(id: string): Promise<'deleted' | 'last_admin' | 'missing'>;
  /** The earliest user and its first account: who a single-tenant server belongs to. */
  firstMembership(): Promise<{ email: string; account_id: string } | undefined>;
  insertToken(token: ApiToken, tokenHash: string): Promise<void>;
  getTokenByHash(tokenHash: string): Promise<(ApiToken & { token_hash: string }) | undefined>;
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

interface TokenRow extends Omit<ApiToken, 'read_only'> {
  read_only: number;
  token_hash: string;
}

export class SqliteAccountStore implements AccountStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async countAccounts(): Promise<number> {
    return this.#db.get<{ n: number }>('SELECT COUNT(*) AS n FROM accounts')?.n ?? 0;
  }

  async insertAccount(account: Account): Promise<void> {
    this.#db.run('INSERT INTO accounts (id, name, type, created_on) VALUES (:id, :name, :type, :created_on)', {
      ...account,
    });
  }

  async getAccount(id: string): Promise<Account | undefined> {
    return this.#db.get<Account>('SELECT id, name, type, created_on FROM accounts WHERE id = ?', [id]);
  }

  async renameAccount(id: string, name: string): Promise<void> {
    this.#db.run('UPDATE accounts SET name = ? WHERE id = ?', [name, id]);
  }

  async insertUser(user: User, apiKeyHash: string | null): Promise<void> {
    this.#db.run(
      'INSERT INTO users (id, email, api_key_hash, created_on, modified_on) VALUES (:id, :email, :hash, :created_on, :modified_on)',
      { ...user, hash: apiKeyHash },
    );
  }

  async getUserById(id: string): Promise<User | undefined> {
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
    this.#db.run(`UPDATE users SET ${assignments} WHERE id = ?`, [
      ...columns.map((column) => profile[column] ?? null),
      modifiedOn,
      userId,
    ]);
  }

  async getUserByEmail(email: string): Promise<(User & { api_key_hash: string | null }) | undefined> {
    return this.#db.get('SELECT id, email, api_key_hash, created_on, modified_on FROM users WHERE email = ?', [email]);
  }

  async setUserApiKeyHash(userId: string, apiKeyHash: string): Promise<void> {
    this.#db.run('UPDATE users SET api_key_hash = ?, modified_on = ? WHERE id = ?', [
      apiKeyHash,
      new Date().toISOString(),
      userId,
    ]);
  }

  async insertMembership(m: {
    id: string;
    account_id: string;
    user_id: string;
    roles: string[];
    status?: string;
    created_on: string;
  }) {
    this.#db.run(
      'INSERT INTO memberships (id, account_id, user_id, roles, status, created_on) VALUES (?, ?, ?, ?, ?, ?)',
      [m.id, m.account_id, m.user_id, JSON.stringify(m.roles), m.status ?? 'accepted', m.created_on],
    );
  }

  async listMemberships(userId: string): Promise<Membership[]> {
    return this.#db
      .all<MembershipRow>(`${MEMBERSHIP_SELECT} WHERE m.user_id = ? ORDER BY a.name, a.id`, [userId])
      .map(toMembership);
  }

  async getMembership(id: string): Promise<Membership | undefined> {
    const row = this.#db.get<MembershipRow>(`${MEMBERSHIP_SELECT} WHERE m.id = ?`, [id]);
    return row && toMembership(row);
  }

  async setMembershipStatus(id: string, status: string): Promise<void> {
    this.#db.run('UPDATE memberships SET status = ? WHERE id = ?', [status, id]);
  }

  async deleteMembershipUnlessLastAdmin(id: string): Promise<'deleted' | 'last_admin' | 'missing'> {
    return this.#db.transaction(() => {
      const row = this.#db.get<MembershipRow>(`${MEMBERSHIP_SELECT} WHERE m.id = ?`, [id]);
      if (!row) return 'missing';
      const membership = toMembership(row);
      if (isAcceptedAdmin(membership)) {
        const others = this.#db
          .all<MembershipRow>(`${MEMBERSHIP_SELECT} WHERE m.account_id = ? AND m.id != ?`, [row.account_id, id])
          .map(toMembership);
        if (!others.some(isAcceptedAdmin)) return 'last_admin';
      }
      this.#db.run('DELETE FROM memberships WHERE id = ?', [id]);
      return 'deleted';
    });
  }

  async firstMembership(): Promise<{ email: string; account_id: string } | undefined> {
    return this.#db.get(
      `SELECT u.email, m.account_id FROM users u JOIN memberships m ON m.user_id = u.id
        ORDER BY u.created_on, m.created_on LIMIT 1`,
    );
  }

  async insertToken(token: ApiToken, tokenHash: string): Promise<void> {
    this.#db.run(
      `INSERT INTO api_tokens (id, user_id, name, token_hash, account_id, read_only, status, not_before, expires_on, created_on)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
      ],
    );
  }

  async getTokenByHash(tokenHash: string): Promise<(ApiToken & { token_hash: string }) | undefined> {
    const row = this.#db.get<TokenRow>('SELECT * FROM api_tokens WHERE token_hash = ?', [tokenHash]);
    return row ? { ...row, read_only: fromSqlBool(row.read_only) } : undefined;
  }
}
