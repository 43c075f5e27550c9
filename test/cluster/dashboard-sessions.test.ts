import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../helpers/backends.ts';
import { spawnLedge, tempDir, TEST_CREDENTIALS, type SpawnedLedge } from '../helpers/ledge.ts';

/**
 * Two `ledge server` nodes on one PostgreSQL, as behind a load balancer: a dashboard session made on one node works
 * on the other, a sign-out on either ends it on both, a sign-in link works once whichever node takes it, and the
 * database holds neither a usable cookie nor the credential.
 */
describe('dashboard sessions across two nodes on one PostgreSQL', () => {
  const nodes: SpawnedLedge[] = [];
  let databaseUrl = '';
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const database = await freshPostgresDatabase();
    databaseUrl = database.url;
    dropDatabase = () => database.drop();
    const env = {
      LEDGE_DATABASE_URL: database.url,
      LEDGE_SECRET_KEY: randomBytes(32).toString('base64'),
      LEDGE_FUNCTIONS_PROCESSES: '1',
    };
    nodes.push(await spawnLedge(tempDir('ledge-node1-'), [], { ...env, LEDGE_NODE_ID: 'node-1' }));
    nodes.push(await spawnLedge(tempDir('ledge-node2-'), [], { ...env, LEDGE_NODE_ID: 'node-2' }));
  });
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.stop('SIGTERM').catch(() => undefined)));
    await dropDatabase?.();
  });

  const originOf = (node: SpawnedLedge) => new URL(node.apiUrl).origin;
  const signIn = async (node: SpawnedLedge) => {
    const response = await fetch(`${originOf(node)}/dashboard/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: originOf(node) },
      body: JSON.stringify({ api_token: TEST_CREDENTIALS.apiToken }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { result: { csrf_token: string } };
    return { cookie: (response.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: body.result.csrf_token };
  };
  const session = (node: SpawnedLedge, cookie: string) =>
    fetch(`${originOf(node)}/dashboard/session`, { headers: { cookie } });
  const createBucket = (node: SpawnedLedge, cookie: string, csrf: string, name: string) =>
    fetch(`${node.apiUrl}/accounts/${TEST_CREDENTIALS.accountId}/r2/buckets`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json', origin: originOf(node) },
      body: JSON.stringify({ name }),
    });

  it('a session made on one node reads and writes on the other, with the same CSRF token', async () => {
    const [one, two] = [nodes[0]!, nodes[1]!];
    const { cookie, csrf } = await signIn(one);
    const there = await session(two, cookie);
    expect(there.status).toBe(200);
    expect(((await there.json()) as { result: { csrf_token: string } }).result.csrf_token).toBe(csrf);
    const created = await createBucket(two, cookie, csrf, 'made-on-node-two');
    expect(created.status).toBe(200);
    const listed = await fetch(`${one.apiUrl}/accounts/${TEST_CREDENTIALS.accountId}/r2/buckets`, {
      headers: { cookie },
    });
    expect(JSON.stringify(await listed.json())).toContain('made-on-node-two');
    // A write on node two without the CSRF token is still refused there.
    const forged = await fetch(`${two.apiUrl}/accounts/${TEST_CREDENTIALS.accountId}/r2/buckets`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'forged' }),
    });
    expect(forged.status).toBe(403);
  });

  it('signing out on one node ends the session on both', async () => {
    const [one, two] = [nodes[0]!, nodes[1]!];
    const { cookie, csrf } = await signIn(one);
    expect((await session(two, cookie)).status).toBe(200);
    const out = await fetch(`${originOf(two)}/dashboard/session`, {
      method: 'DELETE',
      headers: { cookie, 'x-csrf-token': csrf, origin: originOf(two) },
    });
    expect(out.status).toBe(200);
    expect((await session(one, cookie)).status).toBe(401);
    expect((await session(two, cookie)).status).toBe(401);
    const api = await fetch(`${one.apiUrl}/accounts/${TEST_CREDENTIALS.accountId}/r2/buckets`, { headers: { cookie } });
    expect(api.status).toBe(400); // no session: no credentials at all (the API's own "missing credentials")
  });

  it('a sign-in link made on one node signs in once on the other', async () => {
    const [one, two] = [nodes[0]!, nodes[1]!];
    const made = await fetch(`${originOf(one)}/dashboard/links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` },
    });
    const { url } = ((await made.json()) as { result: { url: string } }).result;
    const path = new URL(url).pathname + new URL(url).search;
    const byHand = { 'sec-fetch-site': 'none' };
    const first = await fetch(`${originOf(two)}${path}`, { redirect: 'manual', headers: byHand });
    expect(first.status).toBe(303);
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect((await session(one, cookie)).status).toBe(200);
    const again = await fetch(`${originOf(one)}${path}`, { redirect: 'manual', headers: byHand });
    expect(again.status).toBe(400);
  });

  it('keeps sessions hashed and their credentials sealed, with an expiry', async () => {
    const { cookie } = await signIn(nodes[0]!);
    const id = decodeURIComponent(cookie.split('=')[1]!);
    const sql = postgres(databaseUrl, { max: 1 });
    try {
      const rows = await sql<{ id_hash: string; sealed: string; expires_at: string }[]>`
        SELECT id_hash, sealed, expires_at FROM dashboard_sessions`;
      expect(rows.length).toBeGreaterThan(0);
      const text = JSON.stringify(rows);
      expect(text).not.toContain(id);
      expect(text).not.toContain(TEST_CREDENTIALS.apiToken);
      for (const row of rows) expect(Number(row.expires_at)).toBeGreaterThan(Date.now());
    } finally {
      await sql.end();
    }
  });
});
