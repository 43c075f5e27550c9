import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../helpers/backends.ts';
import { spawnLedge, tempDir, TEST_CREDENTIALS, type SpawnedLedge } from '../helpers/ledge.ts';
import { startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { waitFor } from '../helpers/wait.ts';
import { call, type LedgeTarget } from '../notifications/api-helpers.ts';
import { workerdClusterEnv } from './cluster-helpers.ts';

/** One `ledge server` of the three, restartable on its own data dir. */
interface Node extends LedgeTarget {
  name: string;
  dataDir: string;
  process: SpawnedLedge;
}

const ACCOUNT = TEST_CREDENTIALS.accountId;
const headers = { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` };

/** A D1 query through a node's API: the rows, or the failure (status 0 when the node did not answer). */
async function query(
  node: LedgeTarget,
  database: string,
  sql: string,
  params: unknown[] = [],
): Promise<{ ok: boolean; status: number; rows: Record<string, unknown>[]; error?: string }> {
  try {
    const answer = await call(node, 'POST', `/accounts/${ACCOUNT}/d1/database/${database}/query`, { sql, params });
    const ok = answer.status === 200 && answer.body.success;
    const result = (answer.body.result as { results: Record<string, unknown>[] }[] | null) ?? [];
    return {
      ok,
      status: answer.status,
      rows: result.flatMap((r) => r.results ?? []),
      ...(ok ? {} : { error: JSON.stringify(answer.body.errors) }),
    };
  } catch (error) {
    return { ok: false, status: 0, rows: [], error: String(error) };
  }
}

const kvValue = (node: LedgeTarget, namespace: string, key: string) =>
  `${node.apiUrl}/accounts/${ACCOUNT}/storage/kv/namespaces/${namespace}/values/${encodeURIComponent(key)}`;

async function kvPut(node: LedgeTarget, namespace: string, key: string, value: Buffer | string): Promise<number> {
  try {
    const response = await fetch(kvValue(node, namespace, key), { method: 'PUT', headers, body: value });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

async function kvGet(node: LedgeTarget, namespace: string, key: string): Promise<{ status: number; body: Buffer }> {
  try {
    const response = await fetch(kvValue(node, namespace, key), { headers });
    return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
  } catch {
    return { status: 0, body: Buffer.alloc(0) };
  }
}

/**
 * Three real `ledge server` processes on one PostgreSQL and one S3 store (Swift's s3api): each account's engines
 * process on each node is one instance of a workerd cluster (its state in Ledge's cluster store), so a KV
 * namespace or a D1 database runs on one node at a time and any node reaches it.
 */
describe('KV and D1 on three nodes (workerd cluster mode)', () => {
  let s3: S3Server;
  let database: { url: string; drop(): Promise<void> };
  let env: NodeJS.ProcessEnv;
  const nodes: Node[] = [];

  async function start(name: string, dataDir: string): Promise<Node> {
    const spawned = await spawnLedge(dataDir, [], { ...env, LEDGE_NODE_ID: name });
    // The nodes' warnings (workerd's cluster lines among them) into a file, to see why a run failed.
    const log = process.env['ENGINES_CLUSTER_LOG'];
    if (log) spawned.child.stderr?.on('data', (d: Buffer) => appendFileSync(log, `[${name}] ${d}`));
    return { name, dataDir, process: spawned, apiUrl: spawned.apiUrl, accountId: ACCOUNT, tokenHeaders: headers };
  }

  beforeAll(async () => {
    s3 = await startS3Server();
    database = await freshPostgresDatabase();
    env = workerdClusterEnv(s3, database.url);
    // One at a time: the first bootstraps the account.
    for (const i of [1, 2, 3]) nodes.push(await start(`node-${i}`, tempDir(`ledge-engines-node${i}-`)));
  }, 180_000);

  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.process.stop('SIGTERM')));
    await database?.drop();
    await s3?.stop();
  }, 60_000);

  it('reads through node 3 a KV value and a D1 row written through node 1', async () => {
    const [one, , three] = nodes as [Node, Node, Node];
    const created = await call(one, 'POST', `/accounts/${ACCOUNT}/storage/kv/namespaces`, { title: 'shared' });
    expect(created.status, JSON.stringify(created.body.errors)).toBe(200);
    const namespace = (created.body.result as { id: string }).id;
    expect(await kvPut(one, namespace, 'greeting', 'hello from node 1')).toBe(200);
    // Over 64 KiB: a blob in the cluster's bucket, not on node 1's disk.
    const big = randomBytes(200_000);
    expect(await kvPut(one, namespace, 'big', big)).toBe(200);
    const read = await kvGet(three, namespace, 'greeting');
    expect(read.status).toBe(200);
    expect(read.body.toString()).toBe('hello from node 1');
    const bigRead = await kvGet(three, namespace, 'big');
    expect(bigRead.status).toBe(200);
    expect(bigRead.body.equals(big)).toBe(true);

    const db = await call(one, 'POST', `/accounts/${ACCOUNT}/d1/database`, { name: 'shared-db' });
    expect(db.status, JSON.stringify(db.body.errors)).toBe(200);
    const id = (db.body.result as { uuid: string }).uuid;
    expect((await query(one, id, 'CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)')).ok).toBe(true);
    expect((await query(one, id, 'INSERT INTO notes (id, text) VALUES (?, ?)', [1, 'written on node 1'])).ok).toBe(
      true,
    );
    const rows = await query(three, id, 'SELECT text FROM notes WHERE id = 1');
    expect(rows.error).toBeUndefined();
    expect(rows.rows).toEqual([{ text: 'written on node 1' }]);
  }, 120_000);

  it('loses no acknowledged D1 write when the node that owns the database is killed with SIGKILL', async () => {
    const [one, two, three] = nodes as [Node, Node, Node];
    const db = await call(two, 'POST', `/accounts/${ACCOUNT}/d1/database`, { name: 'kill-db' });
    expect(db.status, JSON.stringify(db.body.errors)).toBe(200);
    const id = (db.body.result as { uuid: string }).uuid;
    // Node 2 claims the database: its first request is served there.
    expect((await query(two, id, 'CREATE TABLE writes (id INTEGER PRIMARY KEY, via TEXT)')).ok).toBe(true);

    const acknowledged: number[] = [];
    const failed: string[] = [];
    let next = 0;
    let killed = false;
    let afterKill = 0;
    let firstAfterKill = 0;
    const writer = async (via: Node, until: () => boolean) => {
      while (!until()) {
        const n = next++;
        const answer = await query(via, id, 'INSERT INTO writes (id, via) VALUES (?, ?)', [n, via.name]);
        if (answer.ok) {
          acknowledged.push(n);
          if (killed && via !== two && afterKill++ === 0) firstAfterKill = Date.now();
        } else failed.push(`${n} via ${via.name}: ${answer.status} ${answer.error}`);
      }
    };
    const done = () => killed && afterKill >= 20;
    const writers = [writer(two, () => killed), writer(three, done), writer(one, done)];
    await waitFor(() => acknowledged.length >= 30, '30 acknowledged writes', { timeoutMs: 60_000, everyMs: 10 });
    const killedAt = Date.now();
    await two.process.stop('SIGKILL');
    killed = true;
    await Promise.all(writers);

    const found = await query(one, id, 'SELECT id FROM writes ORDER BY id');
    expect(found.error).toBeUndefined();
    const present = new Set(found.rows.map((row) => row['id'] as number));
    const lost = acknowledged.filter((n) => !present.has(n));
    console.info(
      `D1 writes: ${acknowledged.length} acknowledged (${afterKill} after the kill), ${failed.length} failed, ` +
        `${present.size} rows found, ${lost.length} acknowledged ones lost; ` +
        `first write acknowledged by another node ${firstAfterKill - killedAt} ms after the kill`,
    );
    expect(lost).toEqual([]);
    expect(afterKill).toBeGreaterThanOrEqual(20);

    nodes[1] = await start(two.name, two.dataDir);
  }, 180_000);

  it('fails no request while the nodes restart one after another (SIGTERM, hand-off, back in rotation)', async () => {
    const first = nodes[0]!;
    const created = await call(first, 'POST', `/accounts/${ACCOUNT}/storage/kv/namespaces`, { title: 'rolling' });
    const namespace = (created.body.result as { id: string }).id;
    const db = await call(first, 'POST', `/accounts/${ACCOUNT}/d1/database`, { name: 'rolling-db' });
    const id = (db.body.result as { uuid: string }).uuid;
    expect((await query(first, id, 'CREATE TABLE hits (id INTEGER PRIMARY KEY)')).ok).toBe(true);

    // What a load balancer does: requests go to the nodes in rotation, a node leaves it before it stops.
    const inRotation = new Set(nodes.map((node) => node.name));
    const failures: string[] = [];
    const written: number[] = [];
    let next = 0;
    let stopping = false;
    let turn = 0;
    const pick = () => {
      const live = nodes.filter((node) => inRotation.has(node.name));
      return live[turn++ % live.length]!;
    };
    const client = async () => {
      while (!stopping) {
        const n = next++;
        const node = pick();
        const insert = await query(node, id, 'INSERT INTO hits (id) VALUES (?)', [n]);
        if (insert.ok) written.push(n);
        else failures.push(`D1 insert ${n} via ${node.name}: ${insert.status} ${insert.error}`);
        const put = await kvPut(pick(), namespace, `k${n % 20}`, `v${n}`);
        if (put !== 200) failures.push(`KV put ${n}: ${put}`);
        const got = await kvGet(pick(), namespace, `k${n % 20}`);
        if (got.status !== 200) failures.push(`KV get ${n}: ${got.status}`);
      }
    };
    const clients = [client(), client()];
    for (const [i, node] of nodes.entries()) {
      await waitFor(() => written.length >= (i + 1) * 10, 'writes between restarts', { timeoutMs: 60_000 });
      inRotation.delete(node.name);
      // Let requests already sent to it finish, as a load balancer drains a backend.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await node.process.stop('SIGTERM')).toBe(0);
      nodes[i] = await start(node.name, node.dataDir);
      await waitFor(async () => (await fetch(new URL('/healthz', nodes[i]!.apiUrl))).status === 200, 'healthz');
      inRotation.add(node.name);
    }
    await waitFor(() => written.length >= 40, 'writes after the last restart', { timeoutMs: 60_000 });
    stopping = true;
    await Promise.all(clients);
    console.info(`rolling restart: ${written.length} D1 inserts, ${failures.length} failed requests`);
    expect(failures).toEqual([]);
    const count = await query(nodes[0]!, id, 'SELECT count(*) AS n FROM hits');
    expect(count.rows[0]!['n']).toBe(written.length);
  }, 300_000);
});
