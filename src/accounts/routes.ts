import { Hono } from 'hono';
import { readJson } from '../api-kit/body.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { pageOf, parsePagination } from '../api-kit/pagination.ts';
import { ok } from '../api-kit/respond.ts';
import { LedgeError } from '../shared/errors.ts';
import { AuthErrors } from './errors.ts';
import { AccountUpdateSchema, MembershipUpdateSchema, UserEditSchema } from './schemas.ts';
import type { AccountService } from './service.ts';
import type { Principal } from './principal.ts';
import type { Account, Membership, User } from './types.ts';

const PAGING = { defaultPerPage: 20, maxPerPage: 50, minPerPage: 5, code: 1001 } as const;

/** `/user`, `/user/tokens/verify`, `/accounts`, `/memberships`: what wrangler whoami and the SDK read. */
export function accountRoutes(accounts: AccountService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get('/user', async (c) => {
    const user = await accounts.getUser(c.get('principal').userId);
    if (!user) throw AuthErrors.invalidToken();
    return ok(c, renderUser(user));
  });

  app.patch('/user', async (c) => {
    const edit = await readJson(c, UserEditSchema, { code: 1001 });
    const user = await accounts.editUser(c.get('principal').userId, edit);
    if (!user) throw AuthErrors.invalidToken();
    return ok(c, renderUser(user));
  });

  app.get('/user/tokens/verify', (c) => {
    const token = c.get('principal').token;
    if (!token) throw AuthErrors.notAToken();
    return ok(
      c,
      // Dates only when the token has them: the SDK types them optional strings, never null.
      {
        id: token.id,
        status: token.status,
        ...(token.not_before ? { not_before: token.not_before } : {}),
        ...(token.expires_on ? { expires_on: token.expires_on } : {}),
      },
      {
        messages: [{ code: 10000, message: 'This API Token is valid and active' }],
      },
    );
  });

  app.get('/accounts', async (c) => {
    const request = parsePagination(c.req.query(), PAGING);
    const name = c.req.query('name');
    const direction = c.req.query('direction') ?? 'asc';
    if (direction !== 'asc' && direction !== 'desc') throw new LedgeError(400, 1001, 'direction must be asc or desc');
    let memberships = (await accounts.membershipsOf(c.get('principal'))).filter((m) => m.status === 'accepted');
    if (name) memberships = memberships.filter((m) => m.account.name.toLowerCase().includes(name.toLowerCase()));
    if (direction === 'desc') memberships = memberships.reverse();
    const found = await Promise.all(memberships.map((m) => accounts.getAccount(m.account.id)));
    const { items, info } = pageOf(
      found.filter((a): a is Account => a !== undefined),
      request,
    );
    return ok(c, items.map(renderAccount), { resultInfo: info });
  });

  app.get('/accounts/:account_id', async (c) => {
    const account = await accounts.getAccount(c.req.param('account_id'));
    if (!account) throw AuthErrors.accountForbidden();
    return ok(c, renderAccount(account));
  });

  app.put('/accounts/:account_id', async (c) => {
    const update = await readJson(c, AccountUpdateSchema, { code: 1001 });
    const account = await accounts.renameAccount(c.get('principal'), c.req.param('account_id'), update.name);
    if (!account) throw AuthErrors.accountForbidden();
    return ok(c, renderAccount(account));
  });

  app.get('/memberships', async (c) => {
    const request = parsePagination(c.req.query(), PAGING);
    const principal = c.get('principal');
    const { items, info } = pageOf(await accounts.membershipsOf(principal), request);
    return ok(
      c,
      items.map((m) => renderMembership(m, principal)),
      { resultInfo: info },
    );
  });

  app.get('/memberships/:membership_id', async (c) => {
    const principal = c.get('principal');
    return ok(c, renderMembership(await accounts.membershipOf(principal, c.req.param('membership_id')), principal));
  });

  app.put('/memberships/:membership_id', async (c) => {
    const { status } = await readJson(c, MembershipUpdateSchema, { code: 1001 });
    const principal = c.get('principal');
    const membership = await accounts.answerInvitation(principal, c.req.param('membership_id'), status);
    return ok(c, renderMembership(membership, principal));
  });

  // Cloudflare's other door to the same invitations (client.user.invites): an invite is a pending membership.
  app.get('/user/invites', async (c) => {
    const principal = c.get('principal');
    const pending = (await accounts.membershipsOf(principal)).filter((m) => m.status === 'pending');
    return ok(
      c,
      pending.map((m) => renderInvite(m, principal)),
    );
  });

  app.get('/user/invites/:invite_id', async (c) => {
    const principal = c.get('principal');
    return ok(c, renderInvite(await accounts.membershipOf(principal, c.req.param('invite_id')), principal));
  });

  app.patch('/user/invites/:invite_id', async (c) => {
    const { status } = await readJson(c, MembershipUpdateSchema, { code: 1001 });
    const principal = c.get('principal');
    const membership = await accounts.answerInvitation(principal, c.req.param('invite_id'), status);
    return ok(c, renderInvite(membership, principal));
  });

  app.delete('/memberships/:membership_id', async (c) => {
    await accounts.leaveAccount(c.get('principal'), c.req.param('membership_id'));
    return ok(c, { id: c.req.param('membership_id') });
  });

  return app;
}

function renderAccount(account: Account) {
  return {
    id: account.id,
    name: account.name,
    type: account.type,
    settings: { enforce_twofactor: false, api_access_enabled: null, use_account_custom_ns_by_default: false },
    created_on: account.created_on,
  };
}

function renderMembership(m: Membership, principal: Principal) {
  return {
    id: m.id,
    status: m.status,
    account: m.account,
    roles: m.roles,
    permissions: permissionsFor(principal.readOnly),
  };
}

function renderInvite(m: Membership, principal: Principal) {
  return {
    id: m.id,
    invited_member_id: m.user_id,
    invited_member_email: principal.email,
    organization_id: m.account.id,
    organization_name: m.account.name,
    organization_is_enforcing_twofactor: false,
    roles: m.roles,
    status: m.status,
    invited_on: m.created_on,
  };
}

function renderUser(user: User) {
  return {
    id: user.id,
    email: user.email,
    first_name: user.first_name ?? null,
    last_name: user.last_name ?? null,
    username: user.email.split('@')[0],
    telephone: user.telephone ?? null,
    country: user.country ?? null,
    zipcode: user.zipcode ?? null,
    two_factor_authentication_enabled: false,
    suspended: false,
    has_pro_zones: false,
    has_business_zones: false,
    has_enterprise_zones: false,
    organizations: [],
    betas: [],
    created_on: user.created_on,
    modified_on: user.modified_on,
  };
}

function permissionsFor(readOnly: boolean) {
  const grant = { read: true, write: !readOnly };
  return { analytics: grant, billing: grant, workers: grant, load_balancers: grant, notifications: grant, r2: grant };
}
