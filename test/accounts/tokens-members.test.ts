import Cloudflare from 'cloudflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';

const EDIT = 'c8fed203ed3043cba015a93ad1616f1f';
const READ = '82e64a83756745bbbb1c9c2701bf816b';
const ADMIN_ROLE = '05784afa30c1afe1440e79d9351c7430';
const MEMBER_ROLE = 'e58cefd75d7adae0b761796c28815e5c';

/**
 * `/user/tokens` and `/accounts/{id}/members` through the official SDK: a token made, rolled and deleted through the
 * API works, stops working and is gone exactly then; members invited, given roles and removed; and nothing here lets
 * a caller gain what it does not have.
 */
describe('API tokens and account members through the API', () => {
  let ledge: TestLedge;
  let owner: Cloudflare;
  const clientFor = (apiToken: string) => new Cloudflare({ baseURL: ledge.apiUrl, apiToken, maxRetries: 0 });
  const works = async (value: string) =>
    (
      await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets`, {
        headers: { authorization: `Bearer ${value}` },
      })
    ).status;
  const policy = (group: string, account = ledge.accountId) => ({
    effect: 'allow' as const,
    permission_groups: [{ id: group }],
    resources: { [`com.cloudflare.api.account.${account}`]: '*' },
  });
  const raw = async (value: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${ledge.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${value}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return {
      status: response.status,
      body: (await response.json()) as { errors: { code: number }[]; result: unknown },
    };
  };

  beforeAll(async () => {
    ledge = await startLedge();
    owner = clientFor(ledge.apiToken);
  });
  afterAll(async () => ledge?.close());

  it('creates a token whose value is shown once and works, rolls it (the old value stops) and deletes it', async () => {
    const created = await owner.user.tokens.create({ name: 'deploys', policies: [policy(EDIT)] });
    const value = created.value!;
    expect(value).toBeTruthy();
    expect(await works(value)).toBe(200);
    const listed = [];
    for await (const token of owner.user.tokens.list()) listed.push(token);
    const mine = listed.find((t) => t.id === created.id)!;
    expect(mine).toMatchObject({ name: 'deploys', status: 'active' });
    expect(JSON.stringify(listed)).not.toContain(value);
    expect((await owner.user.tokens.get(created.id!)).policies?.[0]?.resources).toEqual({
      [`com.cloudflare.api.account.${ledge.accountId}`]: '*',
    });

    const rolled = await owner.user.tokens.value.update(created.id!);
    expect(rolled).not.toBe(value);
    expect(await works(value)).toBe(401);
    expect(await works(rolled)).toBe(200);

    await owner.user.tokens.delete(created.id!);
    expect(await works(rolled)).toBe(401);
    expect((await raw(ledge.apiToken, 'GET', `/user/tokens/${created.id}`)).status).toBe(404);
  });

  it('makes a read-only token from the Read group, and a read-only token cannot make tokens', async () => {
    const created = await owner.user.tokens.create({ name: 'viewer', policies: [policy(READ)] });
    const viewer = created.value!;
    expect(await works(viewer)).toBe(200);
    const write = await raw(viewer, 'POST', `/accounts/${ledge.accountId}/r2/buckets`, { name: 'nope' });
    expect(write.status).toBe(403);
    const minted = await raw(viewer, 'POST', '/user/tokens', { name: 'escalate', policies: [policy(EDIT)] });
    expect(minted.status).toBe(403);
  });

  it('a token limited to one account sees and makes only tokens limited to it', async () => {
    const scoped = (await owner.user.tokens.create({ name: 'scoped', policies: [policy(EDIT)] })).value!;
    const wide = await raw(scoped, 'POST', '/user/tokens', {
      name: 'wider',
      policies: [
        { effect: 'allow', permission_groups: [{ id: EDIT }], resources: { 'com.cloudflare.api.account.*': '*' } },
      ],
    });
    expect(wide.status).toBe(400);
    expect(wide.body.errors[0]!.code).toBe(1001);
    const listed = (await raw(scoped, 'GET', '/user/tokens')).body.result as {
      resources?: unknown;
      policies: { resources: Record<string, string> }[];
    }[];
    expect(listed.length).toBeGreaterThan(0);
    for (const token of listed)
      expect(Object.keys(token.policies[0]!.resources)).toEqual([`com.cloudflare.api.account.${ledge.accountId}`]);
    // The bootstrap token reaches every account: out of this token's sight, so it cannot roll it.
    const bootstrap = (await raw(ledge.apiToken, 'GET', '/user/tokens')).body.result as { id: string; name: string }[];
    const all = bootstrap.find((t) => t.name === 'bootstrap token')!;
    expect((await raw(scoped, 'PUT', `/user/tokens/${all.id}/value`, {})).status).toBe(404);
    // An account the caller is not in.
    const foreign = await raw(ledge.apiToken, 'POST', '/user/tokens', {
      name: 'x',
      policies: [policy(EDIT, 'f'.repeat(32))],
    });
    expect(foreign.status).toBe(403);
  });

  it('refuses policies Ledge cannot express, with 400 1001', async () => {
    for (const policies of [
      [],
      [
        {
          effect: 'deny',
          permission_groups: [{ id: EDIT }],
          resources: { [`com.cloudflare.api.account.${ledge.accountId}`]: '*' },
        },
      ],
      [{ effect: 'allow', permission_groups: [{ id: 'unknown' }], resources: { 'com.cloudflare.api.account.*': '*' } }],
      [{ effect: 'allow', permission_groups: [{ id: EDIT }], resources: { 'com.cloudflare.api.zone.*': '*' } }],
    ]) {
      const answer = await raw(ledge.apiToken, 'POST', '/user/tokens', { name: 'bad', policies });
      expect(answer.status, JSON.stringify(policies)).toBe(400);
      expect(answer.body.errors[0]!.code).toBe(1001);
    }
  });

  it('invites a member, who accepts; changes roles; keeps the last administrator; removes the member', async () => {
    const roles = [];
    for await (const role of owner.accounts.roles.list({ account_id: ledge.accountId })) roles.push(role.name);
    expect(roles).toEqual(['Super Administrator - All Privileges', 'Administrator', 'Member']);

    const invited = await owner.accounts.members.create({
      account_id: ledge.accountId,
      email: 'new.member@example.com',
      roles: [MEMBER_ROLE],
    });
    expect(invited).toMatchObject({ status: 'pending', email: 'new.member@example.com' });
    expect(invited.roles?.map((r) => r.name)).toEqual(['Member']);
    // The new user (made without credentials) gets a token from the operator, sees the invitation and accepts.
    const accounts = ledge.server.platform.accounts;
    const user = (await accounts.getUserByEmail('new.member@example.com'))!;
    const { value } = await accounts.createToken({ userId: user.id, name: 'member' });
    const member = clientFor(value);
    const memberships = [];
    for await (const m of member.memberships.list()) memberships.push(m);
    expect(memberships.map((m) => m.status)).toEqual(['pending']);
    expect(await works(value)).toBe(403);
    await member.memberships.update(memberships[0]!.id!, { status: 'accepted' });
    expect(await works(value)).toBe(200);

    // A Member manages no members.
    const byMember = await raw(value, 'POST', `/accounts/${ledge.accountId}/members`, {
      email: 'third@example.com',
      roles: [MEMBER_ROLE],
    });
    expect(byMember.status).toBe(403);
    expect(await raw(value, 'DELETE', `/accounts/${ledge.accountId}/members/${invited.id}`, undefined)).toMatchObject({
      status: 403,
    });

    const list = [];
    for await (const m of owner.accounts.members.list({ account_id: ledge.accountId })) list.push(m);
    const ownerMember = list.find((m) => m.email !== 'new.member@example.com')!;
    // The owner is the only administrator: not demoted, not removed.
    const demote = await raw(ledge.apiToken, 'PUT', `/accounts/${ledge.accountId}/members/${ownerMember.id}`, {
      roles: [{ id: MEMBER_ROLE }],
    });
    expect(demote.status).toBe(409);
    const remove = await raw(ledge.apiToken, 'DELETE', `/accounts/${ledge.accountId}/members/${ownerMember.id}`);
    expect(remove.status).toBe(409);

    const promoted = await owner.accounts.members.update(invited.id!, {
      account_id: ledge.accountId,
      roles: [{ id: ADMIN_ROLE }],
    });
    expect(promoted.roles?.map((r) => r.name)).toEqual(['Administrator']);
    await owner.accounts.members.delete(invited.id!, { account_id: ledge.accountId });
    expect(await works(value)).toBe(403);
    const again = await raw(ledge.apiToken, 'GET', `/accounts/${ledge.accountId}/members/${invited.id}`);
    expect(again.status).toBe(404);
  });

  it('refuses bad member input: an unknown role, a bad e-mail, a member twice', async () => {
    const path = `/accounts/${ledge.accountId}/members`;
    expect((await raw(ledge.apiToken, 'POST', path, { email: 'x@example.com', roles: ['Owner'] })).status).toBe(400);
    expect((await raw(ledge.apiToken, 'POST', path, { email: 'not-an-email', roles: [MEMBER_ROLE] })).status).toBe(400);
    expect((await raw(ledge.apiToken, 'POST', path, { email: 'x@example.com', roles: [] })).status).toBe(400);
    expect((await raw(ledge.apiToken, 'POST', path, { email: 'twice@example.com', roles: [MEMBER_ROLE] })).status).toBe(
      200,
    );
    const twice = await raw(ledge.apiToken, 'POST', path, { email: 'twice@example.com', roles: [MEMBER_ROLE] });
    expect(twice.status).toBe(409);
  });
});
