import { hashCredential } from '../shared/crypto.ts';
import { LedgeError } from '../shared/errors.ts';
import { newId, newSecret } from '../shared/ids.ts';
import type { AccessChanges } from '../shared/grant-watch.ts';
import { conditionWithin } from '../shared/request-ip.ts';
import { isoNow } from '../shared/time.ts';
import type { Clock } from '../shared/clock.ts';
import { AuthErrors } from './errors.ts';
import type { Principal } from './principal.ts';
import type { TokenCreate } from './schemas.ts';
import { isEmail } from './service.ts';
import { isAcceptedAdmin, isAcceptedSuperAdmin, type AccountMember, type AccountStore } from './store.ts';
import type { ApiToken, Membership } from './types.ts';

/**
 * Ledge's permission groups for API tokens (`GET /user/tokens/permission_groups`): a token reads and writes every
 * resource of the accounts it reaches, or only reads them. Cloudflare's finer groups have no meaning here.
 */
export const PERMISSION_GROUPS = [
  { id: 'c8fed203ed3043cba015a93ad1616f1f', name: 'All resources: Edit', scopes: ['com.cloudflare.api.account'] },
  { id: '82e64a83756745bbbb1c9c2701bf816b', name: 'All resources: Read', scopes: ['com.cloudflare.api.account'] },
] as const;
export const [EDIT_GROUP, READ_GROUP] = PERMISSION_GROUPS;

/**
 * Account roles (`GET /accounts/{id}/roles`). Every accepted member reaches all of the account's resources (what a
 * request may do is the token's business: read-only or not); an Administrator also manages the members.
 */
export const ROLES = [
  {
    id: '33666b9c79b9a5273fc7344ff42f953d',
    name: 'Super Administrator - All Privileges',
    description:
      "Can access the full account and manage its members, Super Administrators included; an account's last one stays",
  },
  {
    id: '05784afa30c1afe1440e79d9351c7430',
    name: 'Administrator',
    description: "Can access the full account, and manage the account's members",
  },
  {
    id: 'e58cefd75d7adae0b761796c28815e5c',
    name: 'Member',
    description: "Can access the full account's resources, but not manage its members",
  },
] as const;

const ACCOUNT_RESOURCE = 'com.cloudflare.api.account.';

export const ManagementErrors = {
  tokenNotFound: () => new LedgeError(404, 1003, 'Token not found'),
  memberNotFound: () => new LedgeError(404, 1003, 'Member not found'),
  notAdministrator: () => new LedgeError(403, 9109, 'Only an Administrator of the account can manage its members'),
  badPolicies: (why: string) => new LedgeError(400, 1001, `Invalid token policies: ${why}`),
  outlivesCaller: (expiresOn: string) =>
    new LedgeError(
      400,
      1001,
      `This token expires on ${expiresOn}: the tokens it makes must expire by then (give expires_on no later)`,
    ),
  widerCondition: () =>
    new LedgeError(
      400,
      1001,
      'This token may only be used from the addresses its condition.request_ip allows: the tokens it makes must be limited at least as much',
    ),
  badRole: (role: string) => new LedgeError(400, 1001, `Unknown role ${role}: see GET /accounts/{account_id}/roles`),
  alreadyMember: (email: string) => new LedgeError(409, 1002, `${email} is a member of this account already`),
  noConsent: () =>
    new LedgeError(
      400,
      1001,
      'A member is added as an invitation (status pending) that the user accepts: PATCH /user/invites/{id} or PUT /memberships/{id}',
    ),
  notSuperAdministrator: () =>
    new LedgeError(403, 9109, 'Only a Super Administrator of the account grants, takes or removes that role'),
} as const;

/**
 * API tokens and account members, managed through the API (what `ledge admin` does from the server's shell).
 * A caller never gains through these what it does not have: a token limited to one account sees and makes only
 * tokens limited to that account, and only an accepted Administrator changes the members.
 */
export class AccountManagement {
  readonly #store: AccountStore;
  readonly #changes: AccessChanges | undefined;
  readonly #clock: Clock;

  constructor(store: AccountStore, changes: AccessChanges | undefined, clock: Clock) {
    this.#store = store;
    this.#changes = changes;
    this.#clock = clock;
  }

  /** The caller's tokens that it may manage (within its own token's account scope). */
  async tokens(principal: Principal): Promise<ApiToken[]> {
    return (await this.#store.listTokens(principal.userId)).filter((token) => inScope(principal, token));
  }

  async token(principal: Principal, id: string): Promise<ApiToken> {
    const token = (await this.tokens(principal)).find((t) => t.id === id);
    if (!token) throw ManagementErrors.tokenNotFound();
    return token;
  }

  /** A new token of the caller's user; its value is returned once, only its hash is kept. */
  async createToken(principal: Principal, input: TokenCreate): Promise<{ token: ApiToken; value: string }> {
    const policy = input.policies[0]!;
    if (input.policies.length !== 1) throw ManagementErrors.badPolicies('give exactly one policy');
    if (policy.effect !== 'allow') throw ManagementErrors.badPolicies('Ledge tokens only allow');
    const groups = policy.permission_groups.map((g) => g.id);
    if (groups.length === 0 || groups.some((id) => id !== EDIT_GROUP.id && id !== READ_GROUP.id)) {
      throw ManagementErrors.badPolicies(
        `permission groups are ${EDIT_GROUP.id} (${EDIT_GROUP.name}) or ${READ_GROUP.id} (${READ_GROUP.name})`,
      );
    }
    const resources = Object.keys(policy.resources);
    const resource = resources[0];
    if (resources.length !== 1 || !resource?.startsWith(ACCOUNT_RESOURCE)) {
      throw ManagementErrors.badPolicies(`give one resource, ${ACCOUNT_RESOURCE}<account_id> or ${ACCOUNT_RESOURCE}*`);
    }
    const scope = resource.slice(ACCOUNT_RESOURCE.length);
    const accountId = scope === '*' ? null : scope;
    if (accountId !== null && !principal.accountIds.has(accountId)) throw AuthErrors.accountForbidden();
    // A token limited to one account makes tokens limited to it, never wider ones.
    const callerScope = principal.token?.account_id ?? null;
    if (callerScope !== null && accountId !== callerScope) {
      throw ManagementErrors.badPolicies(`this token reaches account ${callerScope} only: so must the tokens it makes`);
    }
    this.#notMoreThanCaller(principal, input);
    const value = newSecret(30);
    const token: ApiToken = {
      id: newId(),
      user_id: principal.userId,
      name: input.name,
      account_id: accountId,
      read_only: principal.readOnly || !groups.includes(EDIT_GROUP.id),
      status: 'active',
      not_before: input.not_before ?? null,
      expires_on: input.expires_on ?? null,
      created_on: isoNow(this.#clock),
      condition: input.condition?.request_ip ? { request_ip: input.condition.request_ip } : null,
    };
    await this.#store.insertToken(token, hashCredential(value));
    return { token, value };
  }

  /** A token makes no token that outlives it or may be used from where it may not (its scope: see createToken). */
  #notMoreThanCaller(principal: Principal, input: TokenCreate): void {
    const caller = principal.token;
    if (!caller) return;
    if (caller.expires_on && (!input.expires_on || Date.parse(input.expires_on) > Date.parse(caller.expires_on))) {
      throw ManagementErrors.outlivesCaller(caller.expires_on);
    }
    if (!conditionWithin(input.condition, caller.condition)) throw ManagementErrors.widerCondition();
  }

  /** A new value for the token; the old one (and every dashboard session signed in with it) stops working. */
  async rollToken(principal: Principal, id: string): Promise<string> {
    await this.token(principal, id);
    const value = newSecret(30);
    await this.#store.setTokenHash(id, hashCredential(value));
    this.#changes?.notify();
    return value;
  }

  async deleteToken(principal: Principal, id: string): Promise<void> {
    await this.token(principal, id);
    await this.#store.deleteToken(id);
    this.#changes?.notify();
  }

  members(accountId: string): Promise<AccountMember[]> {
    return this.#store.listAccountMembers(accountId);
  }

  async member(accountId: string, memberId: string): Promise<AccountMember> {
    const member = (await this.members(accountId)).find((m) => m.id === memberId);
    if (!member) throw ManagementErrors.memberNotFound();
    return member;
  }

  /**
   * Adds a member by e-mail as `pending`: an invitation the user answers (PATCH /user/invites/{id}, PUT
   * /memberships/{id}). A user not known yet is created without credentials: `ledge admin token create` gives them a
   * token.
   */
  async addMember(
    principal: Principal,
    accountId: string,
    input: { email: string; roles: string[]; status?: 'accepted' | 'pending' | undefined },
  ): Promise<AccountMember> {
    const own = await this.#requireAdmin(principal, accountId);
    // Nobody is made a member without saying yes: an existing user's account list would change under them.
    if (input.status === 'accepted') throw ManagementErrors.noConsent();
    const roles = roleNames(input.roles);
    if (roles.some(isSuperRole) && !isAcceptedSuperAdmin(own)) throw ManagementErrors.notSuperAdministrator();
    if (!isEmail(input.email)) throw new LedgeError(400, 1001, `invalid email address: ${input.email}`);
    let user = await this.#store.getUserByEmail(input.email);
    if (!user) {
      const now = isoNow(this.#clock);
      await this.#store.insertUser({ id: newId(), email: input.email, created_on: now, modified_on: now }, null);
      user = await this.#store.getUserByEmail(input.email);
    }
    const id = newId();
    const added = await this.#store.insertMembership({
      id,
      account_id: accountId,
      user_id: user!.id,
      roles,
      status: 'pending',
      created_on: isoNow(this.#clock),
    });
    if (!added) throw ManagementErrors.alreadyMember(input.email);
    return this.member(accountId, id);
  }

  async setRoles(principal: Principal, accountId: string, memberId: string, roles: string[]): Promise<AccountMember> {
    const own = await this.#requireAdmin(principal, accountId);
    const member = await this.member(accountId, memberId);
    const names = roleNames(roles);
    if ((member.roles.some(isSuperRole) || names.some(isSuperRole)) && !isAcceptedSuperAdmin(own)) {
      throw ManagementErrors.notSuperAdministrator();
    }
    const outcome = await this.#store.setMembershipRolesUnlessLastAdmin(memberId, names);
    if (outcome === 'missing') throw ManagementErrors.memberNotFound();
    refuseOrphaning(outcome, member.account.name);
    this.#changes?.notify();
    return this.member(accountId, memberId);
  }

  async removeMember(principal: Principal, accountId: string, memberId: string): Promise<void> {
    const own = await this.#requireAdmin(principal, accountId);
    const member = await this.member(accountId, memberId);
    if (member.roles.some(isSuperRole) && !isAcceptedSuperAdmin(own)) throw ManagementErrors.notSuperAdministrator();
    const outcome = await this.#store.deleteMembershipUnlessLastAdmin(memberId);
    if (outcome === 'missing') throw ManagementErrors.memberNotFound();
    refuseOrphaning(outcome, member.account.name);
    this.#changes?.notify();
  }

  async #requireAdmin(principal: Principal, accountId: string): Promise<Membership> {
    const own = (await this.#store.listMemberships(principal.userId)).find((m) => m.account.id === accountId);
    if (!own || !isAcceptedAdmin(own)) throw ManagementErrors.notAdministrator();
    return own;
  }
}

function refuseOrphaning(outcome: string, accountName: string): void {
  if (outcome === 'last_admin') throw AuthErrors.lastAdministrator(accountName);
  if (outcome === 'last_super_admin') throw AuthErrors.lastSuperAdministrator(accountName);
}

const isSuperRole = (role: string) => /^super administrator/i.test(role);

function inScope(principal: Principal, token: ApiToken): boolean {
  const scope = principal.token?.account_id;
  return !scope || token.account_id === scope;
}

/** Role ids or names (any case) to the stored names. */
function roleNames(roles: string[]): string[] {
  return [
    ...new Set(
      roles.map((role) => {
        const found = ROLES.find((r) => r.id === role || r.name.toLowerCase() === role.toLowerCase());
        if (!found) throw ManagementErrors.badRole(role);
        return found.name;
      }),
    ),
  ];
}
