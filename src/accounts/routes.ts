import { Hono } from 'hono';
import { readJson } from '../api/body.ts';
import type { AppEnv } from '../api/context.ts';
import { pageOf, parsePagination } from '../api/pagination.ts';
import { ok } from '../api/respond.ts';
import { LedgeError } from '../shared/errors.ts';
import { AuthErrors } from './errors.ts';
import { AccountUpdateSchema } from './schemas.ts';
import type { AccountService } from './service.ts';
import type { Account, User } from './types.ts';

const PAGING = { defaultPerPage: 20, maxPerPage: 50, minPerPage: 5, code: 1001 } as const;

/** `/user`, `/user/tokens/verify`, `/accounts`, `/memberships`: what wrangler whoami and the SDK read. */
export function accountRoutes(accounts: AccountService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get('/user', async (c) => {
    const user = await accounts.getUser(c.get('principal').userId);
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
    let memberships = await accounts.membershipsOf(c.get('principal'));
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
    const account = await accounts.renameAccount(c.req.param('account_id'), update.name);
    if (!account) throw AuthErrors.accountForbidden();
    return ok(c, renderAccount(account));
  });

  app.get('/memberships', async (c) => {
    const request = parsePagination(c.req.query(), PAGING);
    const principal = c.get('principal');
    const { items, info } = pageOf(await accounts.membershipsOf(principal), request);
    const rendered = items.map((m) => ({
      id: m.id,
      status: m.status,
      account: m.account,
      roles: m.roles,
      permissions: permissionsFor(principal.readOnly),
    }));
    return ok(c, rendered, { resultInfo: info });
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

function renderUser(user: User) {
  return {
    id: user.id,
    email: user.email,
    first_name: null,
    last_name: null,
    username: user.email.split('@')[0],
    telephone: null,
    country: null,
    zipcode: null,
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
