import { Hono } from 'hono';
import { readJson } from '../api-kit/body.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { pageOf, parsePagination } from '../api-kit/pagination.ts';
import { ok } from '../api-kit/respond.ts';
import { EDIT_GROUP, PERMISSION_GROUPS, ROLES, type AccountManagement } from './management.ts';
import { MemberCreateSchema, MemberUpdateSchema, TokenCreateSchema } from './schemas.ts';
import type { AccountMember } from './store.ts';
import type { ApiToken } from './types.ts';

const PAGING = { defaultPerPage: 20, maxPerPage: 50, minPerPage: 5, code: 1001 } as const;
const CODE = { code: 1001 } as const;

/**
 * `/user/tokens` (list, create, get, roll the value, delete, permission groups) and `/accounts/{id}/members` and
 * `/roles`: Cloudflare's routes for what `ledge admin` does from the server's shell, so the dashboard (and any
 * client) can manage them with a token. Mounted after `/user/tokens/verify`.
 */
export function managementRoutes(management: AccountManagement): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get('/user/tokens/permission_groups', (c) => ok(c, PERMISSION_GROUPS));
  app.get('/user/tokens', async (c) => {
    const { items, info } = pageOf(await management.tokens(c.get('principal')), parsePagination(c.req.query(), PAGING));
    return ok(c, items.map(renderToken), { resultInfo: info });
  });
  app.post('/user/tokens', async (c) => {
    const input = await readJson(c, TokenCreateSchema, CODE);
    const { token, value } = await management.createToken(c.get('principal'), input);
    return ok(c, { ...renderToken(token), value });
  });
  app.get('/user/tokens/:token_id', async (c) =>
    ok(c, renderToken(await management.token(c.get('principal'), c.req.param('token_id')))),
  );
  app.put('/user/tokens/:token_id/value', async (c) =>
    ok(c, await management.rollToken(c.get('principal'), c.req.param('token_id'))),
  );
  app.delete('/user/tokens/:token_id', async (c) => {
    await management.deleteToken(c.get('principal'), c.req.param('token_id'));
    return ok(c, { id: c.req.param('token_id') });
  });

  const members = '/accounts/:account_id/members';
  app.get('/accounts/:account_id/roles', (c) => {
    // Paged like every list the SDK walks (it asks for the next page until result_info says there is none).
    const { items, info } = pageOf([...ROLES], parsePagination(c.req.query(), PAGING));
    return ok(c, items.map(renderRole), { resultInfo: info });
  });
  app.get(members, async (c) => {
    const all = await management.members(c.req.param('account_id'));
    const { items, info } = pageOf(all, parsePagination(c.req.query(), PAGING));
    return ok(c, items.map(renderMember), { resultInfo: info });
  });
  app.post(members, async (c) => {
    const input = await readJson(c, MemberCreateSchema, CODE);
    return ok(c, renderMember(await management.addMember(c.get('principal'), c.req.param('account_id'), input)));
  });
  app.get(`${members}/:member_id`, async (c) =>
    ok(c, renderMember(await management.member(c.req.param('account_id'), c.req.param('member_id')))),
  );
  app.put(`${members}/:member_id`, async (c) => {
    const { roles } = await readJson(c, MemberUpdateSchema, CODE);
    const member = await management.setRoles(
      c.get('principal'),
      c.req.param('account_id'),
      c.req.param('member_id'),
      roles,
    );
    return ok(c, renderMember(member));
  });
  app.delete(`${members}/:member_id`, async (c) => {
    await management.removeMember(c.get('principal'), c.req.param('account_id'), c.req.param('member_id'));
    return ok(c, { id: c.req.param('member_id') });
  });
  return app;
}

function renderToken(token: ApiToken) {
  const group = token.read_only ? PERMISSION_GROUPS[1] : EDIT_GROUP;
  return {
    id: token.id,
    name: token.name,
    status: token.status,
    issued_on: token.created_on,
    modified_on: token.created_on,
    // Dates only when set: the SDK types them optional strings, never null.
    ...(token.not_before ? { not_before: token.not_before } : {}),
    ...(token.expires_on ? { expires_on: token.expires_on } : {}),
    ...(token.condition ? { condition: token.condition } : {}),
    policies: [
      {
        id: `${token.id}-policy`,
        effect: 'allow' as const,
        permission_groups: [{ id: group.id, name: group.name }],
        resources: { [`com.cloudflare.api.account.${token.account_id ?? '*'}`]: '*' },
      },
    ],
  };
}

function renderRole(role: { id: string; name: string; description: string }) {
  const grant = { read: true, write: true };
  return {
    ...role,
    permissions: {
      analytics: grant,
      dns: grant,
      lb: grant,
      logs: grant,
      zones: grant,
      organization: { read: true, write: role.name === 'Administrator' },
    },
  };
}

function renderMember(member: AccountMember) {
  return {
    id: member.id,
    email: member.email,
    status: member.status,
    user: { id: member.user_id, email: member.email, two_factor_authentication_enabled: false },
    roles: member.roles.map((name) => {
      const role = ROLES.find((r) => r.name === name);
      // A role written by `ledge admin` outside the catalogue shows as it is.
      return renderRole(role ?? { id: name, name, description: name });
    }),
    policies: [],
  };
}
