import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { envelopeOf } from '../helpers/envelope.ts';
import { startLedge, TEST_CREDENTIALS, type TestLedge } from '../helpers/ledge.ts';

let ledge: TestLedge;
let other: { accountId: string; email: string; apiKey: string; token: string };
let readOnlyToken: string;
let scopedToken: string;
let secondAccountId: string;

beforeAll(async () => {
  ledge = await startLedge();
  const accounts = ledge.server.platform.accounts;
  // A second tenant with its own user, account and token.
  const otherAccount = await accounts.createAccount({ name: 'Other Tenant' });
  const { user: otherUser, apiKey } = await accounts.createUser({ email: 'other@example.org' });
  await accounts.addMember(otherAccount.id, otherUser.id);
  const { value } = await accounts.createToken({ userId: otherUser.id, name: 'other' });
  other = { accountId: otherAccount.id, email: otherUser.email, apiKey, token: value };
  // The bootstrap user gets a second account, a read-only token and a token scoped to the first account.
  const owner = (await accounts.getUserByEmail(ledge.email))!;
  const second = await accounts.createAccount({ name: 'Second' });
  await accounts.addMember(second.id, owner.id);
  secondAccountId = second.id;
  readOnlyToken = (await accounts.createToken({ userId: owner.id, name: 'ro', readOnly: true })).value;
  scopedToken = (await accounts.createToken({ userId: owner.id, name: 'scoped', accountId: ledge.accountId })).value;
});
afterAll(() => ledge.close());

async function get(path: string, headers: Record<string, string>, init: RequestInit = {}) {
  const res = await fetch(ledge.apiUrl + path, { ...init, headers });
  return { status: res.status, body: await envelopeOf(res) };
}

describe('authentication', () => {
  it('accepts a bearer token', async () => {
    const { status, body } = await get('/user', ledge.tokenHeaders);
    expect(status).toBe(200);
    expect(body.result.email).toBe(TEST_CREDENTIALS.email);
  });

  it('accepts the global key with its email (any case)', async () => {
    const { status } = await get('/user', { 'x-auth-email': ledge.email.toUpperCase(), 'x-auth-key': ledge.apiKey });
    expect(status).toBe(200);
  });

  it('answers 9106 when no credentials are sent', async () => {
    const { status, body } = await get('/user', {});
    expect(status).toBe(400);
    expect(body.errors[0]).toEqual({
      code: 9106,
      message: 'Missing X-Auth-Key, X-Auth-Email or Authorization headers',
    });
  });

  it('answers 9106 when only one of email and key is sent', async () => {
    expect((await get('/user', { 'x-auth-email': ledge.email })).body.errors[0].code).toBe(9106);
    expect((await get('/user', { 'x-auth-key': ledge.apiKey })).body.errors[0].code).toBe(9106);
  });

  it.each([
    [{ authorization: 'Basic abc' }, 6111],
    [{ authorization: 'Bearer' }, 6111],
    [{ authorization: 'Bearer two words' }, 6111],
    [{ 'x-auth-email': 'not-an-email', 'x-auth-key': TEST_CREDENTIALS.apiKey }, 6102],
    [{ 'x-auth-email': TEST_CREDENTIALS.email, 'x-auth-key': 'bad key with spaces' }, 6103],
  ])('answers 6003 with the error chain for malformed headers %o', async (headers, chainCode) => {
    const { status, body } = await get('/user', headers as Record<string, string>);
    expect(status).toBe(400);
    expect(body.errors[0].code).toBe(6003);
    expect(body.errors[0].message).toBe('Invalid request headers');
    expect(body.errors[0].error_chain[0].code).toBe(chainCode);
  });

  it('answers 9103 for an unknown key or an unknown email', async () => {
    const wrongKey = await get('/user', {
      'x-auth-email': ledge.email,
      'x-auth-key': 'ffffffffffffffffffffffffffffffffffff0',
    });
    expect(wrongKey.status).toBe(403);
    expect(wrongKey.body.errors[0]).toEqual({ code: 9103, message: 'Unknown X-Auth-Key or X-Auth-Email' });
    const wrongEmail = await get('/user', { 'x-auth-email': 'nobody@example.com', 'x-auth-key': ledge.apiKey });
    expect(wrongEmail.body.errors[0].code).toBe(9103);
    // Another user's key with this user's email is not a match either.
    const mixed = await get('/user', { 'x-auth-email': ledge.email, 'x-auth-key': other.apiKey });
    expect(mixed.body.errors[0].code).toBe(9103);
  });

  it('refuses an unknown token', async () => {
    const { status, body } = await get('/user', { authorization: 'Bearer not-a-real-token' });
    expect(status).toBe(401);
    expect(body.errors[0].code).toBe(1000);
  });

  it('verifies tokens as wrangler expects', async () => {
    const { body } = await get('/user/tokens/verify', ledge.tokenHeaders);
    expect(body.result).toMatchObject({ status: 'active' });
    // A token without dates has none in the answer (the SDK types them optional strings, never null).
    expect(body.result).not.toHaveProperty('not_before');
    expect(body.result).not.toHaveProperty('expires_on');
    expect(body.result.id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('stores keys and tokens only as hashes', async () => {
    const secrets = [ledge.apiKey, ledge.apiToken, other.apiKey, other.token];
    const db = ledge.server.platform.db;
    const rows = JSON.stringify([await db.all('SELECT * FROM users'), await db.all('SELECT * FROM api_tokens')]);
    for (const secret of secrets) expect(rows.includes(secret)).toBe(false);
    // On SQLite, not in the file's free pages or WAL either.
    if (db.dialect !== 'sqlite') return;
    const database = readFileSync(`${ledge.dataDir}/ledge.db`);
    const wal = readFileSync(`${ledge.dataDir}/ledge.db-wal`);
    for (const secret of secrets) {
      expect(database.includes(secret)).toBe(false);
      expect(wal.includes(secret)).toBe(false);
    }
  });
});

describe('account isolation', () => {
  it('lists only the accounts of the caller', async () => {
    const mine = (await get('/accounts', ledge.tokenHeaders)).body.result.map((a: { id: string }) => a.id);
    expect(mine).toContain(ledge.accountId);
    expect(mine).not.toContain(other.accountId);
    const theirs = (await get('/accounts', { authorization: `Bearer ${other.token}` })).body.result;
    expect(theirs).toEqual([expect.objectContaining({ id: other.accountId, name: 'Other Tenant' })]);
  });

  it("answers another account's id with 403 and the same answer as for an account that does not exist", async () => {
    const foreign = await get(`/accounts/${other.accountId}`, ledge.tokenHeaders);
    const missing = await get('/accounts/ffffffffffffffffffffffffffffffff', ledge.tokenHeaders);
    expect(foreign.status).toBe(403);
    expect(missing.status).toBe(403);
    expect(foreign.body).toEqual(missing.body);
    const nested = await get(`/accounts/${other.accountId}/anything/below`, ledge.tokenHeaders);
    expect(nested.status).toBe(403);
    expect(nested.body).toEqual(missing.body);
  });

  it('refuses writes to another account', async () => {
    const res = await get(`/accounts/${other.accountId}`, ledge.tokenHeaders, {
      method: 'PUT',
      body: '{"name":"pwned"}',
    });
    expect(res.status).toBe(403);
    expect(
      (await get(`/accounts/${other.accountId}`, { authorization: `Bearer ${other.token}` })).body.result.name,
    ).toBe('Other Tenant');
  });
});

describe('token limits', () => {
  it('a read-only token can read but not write', async () => {
    const headers = { authorization: `Bearer ${readOnlyToken}` };
    expect((await get(`/accounts/${ledge.accountId}`, headers)).status).toBe(200);
    const write = await get(`/accounts/${ledge.accountId}`, headers, { method: 'PUT', body: '{"name":"nope"}' });
    expect(write.status).toBe(403);
    expect(write.body.errors[0]).toEqual({ code: 10000, message: 'Authentication error' });
    expect((await get(`/accounts/${ledge.accountId}`, headers)).body.result.name).not.toBe('nope');
  });

  it('a token limited to one account reaches only that account', async () => {
    const headers = { authorization: `Bearer ${scopedToken}` };
    const listed = (await get('/accounts', headers)).body.result.map((a: { id: string }) => a.id);
    expect(listed).toEqual([ledge.accountId]);
    expect((await get(`/accounts/${secondAccountId}`, headers)).status).toBe(403);
    // The same user's unscoped token reaches both.
    expect((await get(`/accounts/${secondAccountId}`, ledge.tokenHeaders)).status).toBe(200);
    const memberships = (await get('/memberships', headers)).body.result;
    expect(memberships.map((m: { account: { id: string } }) => m.account.id)).toEqual([ledge.accountId]);
  });
});

describe('memberships', () => {
  it('pages memberships with result_info and an empty page past the end', async () => {
    const first = await get('/memberships?page=1&per_page=5', ledge.tokenHeaders);
    expect(first.body.result).toHaveLength(2);
    expect(first.body.result[0]).toMatchObject({ status: 'accepted', roles: ['Administrator'] });
    expect(first.body.result_info).toEqual({ page: 1, per_page: 5, count: 2, total_count: 2, total_pages: 1 });
    const past = await get('/memberships?page=2&per_page=5', ledge.tokenHeaders);
    expect(past.body.result).toEqual([]);
  });

  it('refuses invalid paging values', async () => {
    const res = await get('/accounts?per_page=500', ledge.tokenHeaders);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/per_page/);
  });
});
