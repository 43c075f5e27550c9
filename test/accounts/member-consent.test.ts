import Cloudflare from 'cloudflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';

const SUPER_ROLE = '33666b9c79b9a5273fc7344ff42f953d';
const ADMIN_ROLE = '05784afa30c1afe1440e79d9351c7430';
const MEMBER_ROLE = 'e58cefd75d7adae0b761796c28815e5c';

/**
 * Members join only by saying yes, only Administrators change an account or its members, and an account keeps its
 * last Super Administrator.
 */
describe('account members: consent and roles', () => {
  let ledge: TestLedge;
  const clientFor = (apiToken: string) => new Cloudflare({ baseURL: ledge.apiUrl, apiToken, maxRetries: 0 });
  const raw = async (token: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${ledge.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { result: never; errors: { code: number }[] } };
  };
  /** A user with a token of their own, and an account of their own (so they exist before any invitation). */
  const newUser = async (email: string) => {
    const accounts = ledge.server.platform.accounts;
    const { user } = await accounts.createUser({ email });
    const own = await accounts.createAccount({ name: `${email}'s account` });
    await accounts.addMember(own.id, user.id);
    const { value } = await accounts.createToken({ userId: user.id, name: 'own' });
    return { user, token: value };
  };
  const reaches = async (token: string) =>
    (await raw(token, 'GET', `/accounts/${ledge.accountId}/r2/buckets`)).status === 200;

  beforeAll(async () => {
    ledge = await startLedge();
  });
  afterAll(async () => ledge?.close());

  it('adding an existing user makes an invitation they must accept; `accepted` is refused', async () => {
    const victim = await newUser('existing@example.com');
    const path = `/accounts/${ledge.accountId}/members`;
    const forced = await raw(ledge.apiToken, 'POST', path, {
      email: 'existing@example.com',
      roles: [MEMBER_ROLE],
      status: 'accepted',
    });
    expect(forced.status).toBe(400);
    expect(await reaches(victim.token)).toBe(false);

    const invited = await raw(ledge.apiToken, 'POST', path, { email: 'existing@example.com', roles: [MEMBER_ROLE] });
    expect(invited.body.result).toMatchObject({ status: 'pending' });
    expect(await reaches(victim.token)).toBe(false);
    // The user's side, as the SDK calls it: client.user.invites.
    const client = clientFor(victim.token);
    const invites = [];
    for await (const invite of client.user.invites.list()) invites.push(invite);
    expect(invites).toHaveLength(1);
    expect(invites[0]).toMatchObject({ organization_id: ledge.accountId, status: 'pending' });
    expect(await client.user.invites.get(invites[0]!.id!)).toMatchObject({ status: 'pending' });
    expect(await client.user.invites.edit(invites[0]!.id!, { status: 'accepted' })).toMatchObject({
      status: 'accepted',
    });
    expect(await reaches(victim.token)).toBe(true);
  });

  it('only an Administrator renames the account or changes members', async () => {
    const member = await newUser('plain.member@example.com');
    const invited = await raw(ledge.apiToken, 'POST', `/accounts/${ledge.accountId}/members`, {
      email: 'plain.member@example.com',
      roles: [MEMBER_ROLE],
    });
    await clientFor(member.token).user.invites.edit((invited.body.result as { id: string }).id, {
      status: 'accepted',
    });
    expect(await reaches(member.token)).toBe(true);
    const before = (await raw(ledge.apiToken, 'GET', `/accounts/${ledge.accountId}`)).body.result as { name: string };
    const rename = await raw(member.token, 'PUT', `/accounts/${ledge.accountId}`, { name: 'taken over' });
    expect(rename.status).toBe(403);
    expect(rename.body.errors[0]!.code).toBe(9109);
    expect((await raw(ledge.apiToken, 'GET', `/accounts/${ledge.accountId}`)).body.result).toMatchObject({
      name: before.name,
    });
    const add = await raw(member.token, 'POST', `/accounts/${ledge.accountId}/members`, {
      email: 'friend@example.com',
      roles: [ADMIN_ROLE],
    });
    expect(add.status).toBe(403);
    // An Administrator may.
    expect((await raw(ledge.apiToken, 'PUT', `/accounts/${ledge.accountId}`, { name: before.name })).status).toBe(200);
  });

  it("keeps the account's last Super Administrator: not removed, not demoted, not by an Administrator", async () => {
    const accounts = ledge.server.platform.accounts;
    const account = await accounts.createAccount({ name: 'Supervised' });
    const boss = await newUser('boss@example.com');
    const admin = await newUser('admin@example.com');
    await accounts.addMember(account.id, boss.user.id, ['Super Administrator - All Privileges']);
    await accounts.addMember(account.id, admin.user.id, ['Administrator']);
    const members = (await raw(boss.token, 'GET', `/accounts/${account.id}/members`)).body.result as {
      id: string;
      email: string;
    }[];
    const bossMember = members.find((m) => m.email === 'boss@example.com')!;
    const path = `/accounts/${account.id}/members/${bossMember.id}`;
    // Another Administrator exists, yet the last Super Administrator stays.
    const demoteSelf = await raw(boss.token, 'PUT', path, { roles: [ADMIN_ROLE] });
    expect(demoteSelf.status).toBe(409);
    expect((await raw(boss.token, 'DELETE', path)).status).toBe(409);
    const memberships = (await raw(boss.token, 'GET', '/memberships')).body.result as {
      id: string;
      account: { id: string };
    }[];
    const leave = await raw(
      boss.token,
      'DELETE',
      `/memberships/${memberships.find((m) => m.account.id === account.id)!.id}`,
    );
    expect(leave.status).toBe(409);
    // An Administrator touches no Super Administrator, and makes none.
    expect((await raw(admin.token, 'DELETE', path)).status).toBe(403);
    expect((await raw(admin.token, 'PUT', path, { roles: [MEMBER_ROLE] })).status).toBe(403);
    const promote = await raw(admin.token, 'POST', `/accounts/${account.id}/members`, {
      email: 'climber@example.com',
      roles: [SUPER_ROLE],
    });
    expect(promote.status).toBe(403);
    expect(await accounts.getAccount(account.id)).toBeDefined();
    const still = (await raw(boss.token, 'GET', path)).body.result as { roles: { name: string }[] };
    expect(still.roles.map((r) => r.name)).toEqual(['Super Administrator - All Privileges']);
  });
});
