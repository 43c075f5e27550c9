import { digestsEqual, hashCredential } from '../shared/crypto.ts';
import { LedgeError } from '../shared/errors.ts';
import { newGlobalApiKey, newId, newSecret } from '../shared/ids.ts';
import type { AccessChanges } from '../shared/grant-watch.ts';
import { requestIpAllowed } from '../shared/request-ip.ts';
import { isoNow } from '../shared/time.ts';
import { AuthErrors } from './errors.ts';
import type { Principal } from './principal.ts';
import { isAcceptedAdmin, type AccountStore } from './store.ts';
import type { Account, ApiToken, Membership, User, UserProfile } from './types.ts';
import type { Clock } from '../shared/clock.ts';

const EMAIL_FORMAT = /^[^\s@]+@[^\s@]+$/;
const API_KEY_FORMAT = /^[A-Za-z0-9_-]{1,128}$/;
const TOKEN_FORMAT = /^[A-Za-z0-9._~+/=-]{1,256}$/;
// A structurally valid digest to compare against when the user is unknown, so timing does not tell.
const DUMMY_DIGEST = hashCredential('ledge-no-such-user');

export interface AuthHeaders {
  authorization?: string | undefined;
  email?: string | undefined;
  key?: string | undefined;
  /** Where the request comes from: a token's condition.request_ip is checked against it (unknown meets no `in`). */
  clientIp?: string | undefined;
}

export function isEmail(value: string): boolean {
  return EMAIL_FORMAT.test(value) && value.length <= 254;
}

/** Accounts, users, keys and tokens: creation (bootstrap, admin CLI) and request authentication. */
export class AccountService {
  readonly #store: AccountStore;
  readonly #changes: AccessChanges | undefined;
  /** When tokens start and stop working (not_before, expires_on) and what new records are stamped with. */
  readonly #clock: Clock;

  constructor(store: AccountStore, changes: AccessChanges | undefined, clock: Clock) {
    this.#store = store;
    this.#changes = changes;
    this.#clock = clock;
  }

  async isEmpty(): Promise<boolean> {
    return (await this.#store.countAccounts()) === 0;
  }

  /**
   * The format checks of createAccount, createUser and createToken at once, so that a caller creating
   * all three (first boot) can fail before the first row rather than leave an account without its user.
   */
  checkNewCredentials(input: { accountId: string; email: string; apiKey: string; token: string }): void {
    if (!/^[0-9a-f]{32}$/.test(input.accountId)) {
      throw new LedgeError(400, 1001, 'account id must be 32 lowercase hex characters');
    }
    if (!isEmail(input.email)) throw new LedgeError(400, 1001, `invalid email address: ${input.email}`);
    if (!API_KEY_FORMAT.test(input.apiKey)) throw new LedgeError(400, 1001, 'API key must be 1-128 of [A-Za-z0-9_-]');
    if (!TOKEN_FORMAT.test(input.token)) {
      throw new LedgeError(400, 1001, 'API token has characters a bearer token cannot carry');
    }
  }

  async createAccount(input: { name: string; id?: string }): Promise<Account> {
    const id = input.id ?? newId();
    if (!/^[0-9a-f]{32}$/.test(id)) throw new LedgeError(400, 1001, 'account id must be 32 lowercase hex characters');
    const account: Account = { id, name: input.name, type: 'standard', created_on: isoNow(this.#clock) };
    // The insert itself decides (two creators of one id: one wins, the other gets the 409).
    if (!(await this.#store.insertAccount(account))) throw accountExists(id);
    return account;
  }

  /** Creates a user with a global API key (random unless given); returns the key once. */
  async createUser(input: { email: string; apiKey?: string }): Promise<{ user: User; apiKey: string }> {
    if (!isEmail(input.email)) throw new LedgeError(400, 1001, `invalid email address: ${input.email}`);
    const apiKey = input.apiKey ?? newGlobalApiKey();
    if (!API_KEY_FORMAT.test(apiKey)) throw new LedgeError(400, 1001, 'API key must be 1-128 of [A-Za-z0-9_-]');
    const now = isoNow(this.#clock);
    const user: User = { id: newId(), email: input.email, created_on: now, modified_on: now };
    if (!(await this.#store.insertUser(user, hashCredential(apiKey)))) throw userExists(input.email);
    return { user, apiKey };
  }

  /** Adds a member; `pending` makes it an invitation the user accepts or rejects (PUT /memberships/{id}). */
  async addMember(
    accountId: string,
    userId: string,
    roles: string[] = ['Administrator'],
    status: 'accepted' | 'pending' = 'accepted',
  ): Promise<void> {
    const added = await this.#store.insertMembership({
      id: newId(),
      account_id: accountId,
      user_id: userId,
      roles,
      status,
      created_on: isoNow(this.#clock),
    });
    if (!added) throw new LedgeError(409, 1002, `user ${userId} is a member of account ${accountId} already`);
  }

  /**
   * The first start's owner: account, user (with a global API key), membership and token, written at
   * once and only while no account exists. Returns undefined when one does (another node sharing the
   * database bootstrapped first). Values are checked as checkNewCredentials does.
   */
  async createOwner(input: {
    accountId: string;
    email: string;
    apiKey: string;
    token: string;
  }): Promise<{ account: Account; user: User } | undefined> {
    this.checkNewCredentials(input);
    const now = isoNow(this.#clock);
    const account: Account = {
      id: input.accountId,
      name: `${input.email}'s Account`,
      type: 'standard',
      created_on: now,
    };
    const user: User = { id: newId(), email: input.email, created_on: now, modified_on: now };
    const token = newToken({ userId: user.id, name: 'bootstrap token' }, this.#clock);
    const created = await this.#store.insertOwnerIfEmpty({
      account,
      user,
      apiKeyHash: hashCredential(input.apiKey),
      membership: { id: newId(), account_id: account.id, user_id: user.id, roles: ['Administrator'], created_on: now },
      token,
      tokenHash: hashCredential(input.token),
    });
    return created ? { account, user } : undefined;
  }

  /** Creates an API token (random unless given); returns its value once, only its hash is stored. */
  async createToken(input: {
    userId: string;
    name: string;
    accountId?: string | null;
    readOnly?: boolean;
    value?: string;
  }): Promise<{ token: ApiToken; value: string }> {
    const value = input.value ?? newSecret(30);
    if (!TOKEN_FORMAT.test(value))
      throw new LedgeError(400, 1001, 'API token has characters a bearer token cannot carry');
    const token = newToken(input, this.#clock);
    await this.#store.insertToken(token, hashCredential(value));
    return { token, value };
  }

  getAccount(id: string): Promise<Account | undefined> {
    return this.#store.getAccount(id);
  }

  /** Renaming is an Administrator's: a Member reaches the account's resources, not its settings. */
  async renameAccount(principal: Principal, id: string, name: string): Promise<Account | undefined> {
    const own = (await this.#store.listMemberships(principal.userId)).find((m) => m.account.id === id);
    if (!own || !isAcceptedAdmin(own)) throw AuthErrors.notAdministrator();
    await this.#store.renameAccount(id, name);
    return this.#store.getAccount(id);
  }

  getUser(id: string): Promise<User | undefined> {
    return this.#store.getUserById(id);
  }

  /** PATCH /user: a field that is absent keeps its value, null clears it, an empty string is stored as null. */
  async editUser(id: string, edit: Partial<UserProfile>): Promise<User | undefined> {
    const profile: Partial<UserProfile> = {};
    for (const [field, value] of Object.entries(edit) as [keyof UserProfile, string | null | undefined][]) {
      if (value !== undefined) profile[field] = value === '' ? null : value;
    }
    await this.#store.updateUserProfile(id, profile, isoNow(this.#clock));
    return this.#store.getUserById(id);
  }

  /** One of the caller's own memberships (another user's is "not found", not "forbidden"). */
  async membershipOf(principal: Principal, id: string): Promise<Membership> {
    const membership = await this.#store.getMembership(id);
    if (!membership || membership.user_id !== principal.userId || !inTokenScope(principal, membership.account.id)) {
      throw AuthErrors.membershipNotFound();
    }
    return membership;
  }

  /**
   * Accepts or rejects an invitation (every member added through the API is one; the operator's `ledge admin` may
   * add accepted members). Accepting again is a no-op and rejecting an accepted membership is refused: leaving an
   * account is DELETE.
   */
  async answerInvitation(principal: Principal, id: string, status: 'accepted' | 'rejected'): Promise<Membership> {
    const membership = await this.membershipOf(principal, id);
    if (membership.status === status) return membership;
    if (membership.status === 'accepted') throw AuthErrors.membershipAlreadyAccepted();
    if (membership.status === 'rejected') throw AuthErrors.membershipRejected();
    await this.#store.setMembershipStatus(id, status);
    return { ...membership, status };
  }

  /** Leaves an account, unless that would leave it without an accepted administrator. */
  async leaveAccount(principal: Principal, id: string): Promise<void> {
    const membership = await this.membershipOf(principal, id);
    const outcome = await this.#store.deleteMembershipUnlessLastAdmin(id);
    if (outcome === 'missing') throw AuthErrors.membershipNotFound();
    if (outcome === 'last_admin') throw AuthErrors.lastAdministrator(membership.account.name);
    if (outcome === 'last_super_admin') throw AuthErrors.lastSuperAdministrator(membership.account.name);
    this.#changes?.notify();
  }

  getUserByEmail(email: string): Promise<User | undefined> {
    return this.#store.getUserByEmail(email);
  }

  /** Who this server belongs to (first user, first account), for start-up messages. */
  owner(): Promise<{ email: string; account_id: string } | undefined> {
    return this.#store.firstMembership();
  }

  /**
   * The memberships a principal may see, invitations included (a scoped token sees only its account).
   * Only accepted ones give access to an account (see authenticate).
   */
  async membershipsOf(principal: Principal): Promise<Membership[]> {
    const all = await this.#store.listMemberships(principal.userId);
    return all.filter((m) => inTokenScope(principal, m.account.id));
  }

  /**
   * Resolves request headers to a principal, or throws the v4 error Cloudflare gives for that case.
   * A bearer token wins when both styles are present.
   */
  async authenticate(headers: AuthHeaders): Promise<Principal> {
    if (headers.authorization !== undefined) return this.#authenticateToken(headers.authorization, headers.clientIp);
    if (headers.email === undefined || headers.key === undefined) throw AuthErrors.missingHeaders();
    if (!isEmail(headers.email)) throw AuthErrors.invalidHeaders(6102);
    if (!API_KEY_FORMAT.test(headers.key)) throw AuthErrors.invalidHeaders(6103);
    const user = await this.#store.getUserByEmail(headers.email);
    const matches = digestsEqual(hashCredential(headers.key), user?.api_key_hash ?? DUMMY_DIGEST);
    if (!user || !user.api_key_hash || !matches) throw AuthErrors.unknownKey();
    const memberships = (await this.#store.listMemberships(user.id)).filter((m) => m.status === 'accepted');
    return {
      userId: user.id,
      email: user.email,
      via: 'global_key',
      token: null,
      readOnly: false,
      accountIds: new Set(memberships.map((m) => m.account.id)),
    };
  }

  async #authenticateToken(header: string, clientIp: string | undefined): Promise<Principal> {
    const match = /^Bearer ([^\s]+)$/.exec(header.trim());
    if (!match?.[1] || !TOKEN_FORMAT.test(match[1])) throw AuthErrors.invalidHeaders(6111);
    const hash = hashCredential(match[1]);
    const token = await this.#store.getTokenByHash(hash);
    if (!token || !digestsEqual(hash, token.token_hash) || !isUsable(token, this.#clock.now()))
      throw AuthErrors.invalidToken();
    if (!requestIpAllowed(token.condition, clientIp)) throw AuthErrors.ipNotAllowed(clientIp);
    const principal = await this.#tokenPrincipal(token);
    if (!principal) throw AuthErrors.invalidToken();
    return principal;
  }

  /**
   * An API token as an S3 key pair, as R2 makes them: Access Key ID = the token's id, Secret Access Key =
   * the SHA-256 hex of the token's value (which is what Ledge stores of a token, so the secret is
   * derivable here without the value being kept). Undefined for an unknown, disabled, expired or
   * not-yet-valid token, or one whose user is gone. `principal` is who the pair acts as (reachable
   * accounts = accepted memberships within the token's scope; read-only as the token).
   */
  async s3KeyPair(accessKeyId: string): Promise<S3KeyPair | undefined> {
    if (accessKeyId.length === 0 || accessKeyId.length > 128) return undefined;
    const token = await this.#store.getTokenById(accessKeyId);
    if (!token || !isUsable(token, this.#clock.now())) return undefined;
    const principal = await this.#tokenPrincipal(token);
    if (!principal) return undefined;
    return { accessKeyId: token.id, secretAccessKey: token.token_hash, principal };
  }

  /** Who a usable token acts as, or undefined when its user no longer exists. */
  async #tokenPrincipal(token: ApiToken & { token_hash: string }): Promise<Principal | undefined> {
    const user = await this.#store.getUserById(token.user_id);
    if (!user) return undefined;
    const memberships = (await this.#store.listMemberships(user.id)).filter((m) => m.status === 'accepted');
    const accountIds = memberships
      .map((m) => m.account.id)
      .filter((id) => !token.account_id || id === token.account_id);
    const { token_hash: _hash, ...publicToken } = token;
    return {
      userId: user.id,
      email: user.email,
      via: 'api_token',
      token: publicToken,
      readOnly: token.read_only,
      accountIds: new Set(accountIds),
    };
  }
}

/** An API token's S3 credentials (see AccountService.s3KeyPair). */
export interface S3KeyPair {
  accessKeyId: string;
  /** SHA-256 hex of the token value: the key SigV4 signatures are checked with. Never shown by any API. */
  secretAccessKey: string;
  /** Who requests signed with the pair act as: the token's user, reachable accounts, read-only flag. */
  principal: Principal;
}

function inTokenScope(principal: Principal, accountId: string): boolean {
  return !principal.token?.account_id || principal.token.account_id === accountId;
}

function isUsable(token: ApiToken, now: number): boolean {
  if (token.status !== 'active') return false;
  if (token.not_before && Date.parse(token.not_before) > now) return false;
  if (token.expires_on && Date.parse(token.expires_on) <= now) return false;
  return true;
}

function newToken(
  input: { userId: string; name: string; accountId?: string | null; readOnly?: boolean },
  clock: Clock,
): ApiToken {
  return {
    id: newId(),
    user_id: input.userId,
    name: input.name,
    account_id: input.accountId ?? null,
    read_only: input.readOnly ?? false,
    status: 'active',
    not_before: null,
    expires_on: null,
    created_on: isoNow(clock),
    condition: null,
  };
}

const accountExists = (id: string) => new LedgeError(409, 1002, `account ${id} already exists`);
const userExists = (email: string) => new LedgeError(409, 1002, `a user with email ${email} already exists`);
