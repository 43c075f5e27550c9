import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../helpers/backends.ts';
import { spawnLedge, tempDir, TEST_CREDENTIALS, type SpawnedLedge } from '../helpers/ledge.ts';
import { startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { waitFor } from '../helpers/wait.ts';
import { call, type LedgeTarget } from '../notifications/api-helpers.ts';
import { callFunctionOn, uploadWorker, workerdClusterEnv } from './cluster-helpers.ts';

interface Node extends LedgeTarget {
  process: SpawnedLedge;
  functionsPort: number;
}

const ACCOUNT = TEST_CREDENTIALS.accountId;
const headers = { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` };

const COUNTER_WORKER = `
import { DurableObject } from 'cloudflare:workers';
export class Counter extends DurableObject {
  add() {
    const n = (this.ctx.storage.kv.get('n') ?? 0) + 1;
    this.ctx.storage.kv.put('n', n);
    return n;
  }
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const counter = env.COUNTER.getByName(url.searchParams.get('name') ?? 'main');
    if (url.pathname === '/add') return Response.json(await counter.add());
    return new Response('not found', { status: 404 });
  },
};
`;

describe('Durable Objects in the cluster store (two nodes)', () => {
  let s3: S3Server;
  let database: { url: string; drop(): Promise<void> };
  let env: NodeJS.ProcessEnv;
  let host: string;
  const nodes: Node[] = [];

  beforeAll(async () => {
    s3 = await startS3Server();
    database = await freshPostgresDatabase();
    env = workerdClusterEnv(s3, database.url);
    for (const i of [1, 2]) {
      const dir = tempDir(`ledge-dostore-node${i}-`);
      const spawned = await spawnLedge(dir, [], { ...env, LEDGE_NODE_ID: `node-${i}` });
      nodes.push({
        process: spawned,
        apiUrl: spawned.apiUrl,
        accountId: ACCOUNT,
        tokenHeaders: headers,
        functionsPort: Number(spawned.info['functions_port']),
      });
    }
    const binding = { type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Counter' };
    const migrations = { new_tag: 'v1', steps: [{ new_sqlite_classes: ['Counter'] }] };
    const metadata = { compatibility_date: '2025-04-01', migrations };
    expect(await uploadWorker(nodes[0]!, 'counter', COUNTER_WORKER, [binding], metadata)).toBe(200);
    await call(nodes[0]!, 'POST', `/accounts/${ACCOUNT}/workers/scripts/counter/subdomain`, { enabled: true });
    const result = (await call(nodes[0]!, 'GET', `/accounts/${ACCOUNT}/workers/subdomain`)).body.result;
    host = `counter.${(result as { subdomain: string }).subdomain}.localhost`;
    for (const node of nodes)
      await waitFor(async () => (await callFunctionOn(node.functionsPort, host, '/none')).status === 404, 'serves', {
        timeoutMs: 60_000,
      });
  }, 240_000);

  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.process.stop()));
    await database?.drop();
    await s3?.stop();
  });

  /** GET .../namespaces/{ns}/objects through a node, every page (limit 10), as the SDK pages it. */
  async function listedObjects(node: Node, namespaceId: string): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let cursor = '';
    let pages = 0;
    do {
      const query = `limit=10${cursor ? `&cursor=${cursor}` : ''}`;
      const answer = await call(
        node,
        'GET',
        `/accounts/${ACCOUNT}/workers/durable_objects/namespaces/${namespaceId}/objects?${query}`,
      );
      expect(answer.status).toBe(200);
      const result = answer.body.result as { id: string; hasStoredData: boolean }[];
      ids.push(...result.map((o) => o.id));
      cursor = (answer.body.result_info as unknown as { cursor: string }).cursor;
      pages += 1;
    } while (cursor);
    return { ids, pages };
  }

  it('lists every object of the class through any node, whichever node ran it', async () => {
    // Twelve objects, each first called (so claimed and run) through one node in turn.
    const names = Array.from({ length: 12 }, (_, i) => `object-${i}`);
    for (const [i, name] of names.entries()) {
      const node = nodes[i % 2]!;
      await waitFor(
        async () => (await callFunctionOn(node.functionsPort, host, `/add?name=${name}`)).status === 200,
        `${name} through node ${(i % 2) + 1}`,
        { timeoutMs: 60_000 },
      );
    }
    const namespaces = await call(nodes[0]!, 'GET', `/accounts/${ACCOUNT}/workers/durable_objects/namespaces`);
    const [namespace] = namespaces.body.result as { id: string; class: string }[];
    expect(namespace?.class).toBe('Counter');
    const one = await listedObjects(nodes[0]!, namespace!.id);
    const two = await listedObjects(nodes[1]!, namespace!.id);
    expect(one.ids).toHaveLength(12);
    expect(new Set(one.ids).size).toBe(12);
    expect(one.ids).toEqual([...one.ids].sort());
    expect(one.pages).toBe(2);
    expect(two.ids).toEqual(one.ids);
  }, 240_000);

  /** The keys the cluster store holds for the script's objects (owner records, commits), from its database. */
  async function storedObjectKeys(): Promise<string[]> {
    const sql = postgres(database.url, { max: 1 });
    try {
      const rows = await sql<
        { key: string }[]
      >`SELECT key FROM r2_objects WHERE key LIKE ${`engines/${ACCOUNT}/scripts/counter/v1/do/%`}`;
      return rows.map((row) => row.key);
    } finally {
      await sql.end();
    }
  }

  it('a deleted class takes its objects out of the cluster store', async () => {
    expect((await storedObjectKeys()).filter((key) => key.endsWith('/own.json'))).toHaveLength(12);
    const code = `export default { fetch() { return new Response('no objects'); } };`;
    const migrations = { old_tag: 'v1', new_tag: 'v2', steps: [{ deleted_classes: ['Counter'] }] };
    const metadata = { compatibility_date: '2025-04-01', migrations };
    expect(await uploadWorker(nodes[1]!, 'counter', code, [], metadata)).toBe(200);
    expect(await storedObjectKeys()).toEqual([]);
  }, 240_000);
});
