import { existsSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../helpers/backends.ts';
import { spawnLedge, tempDir, TEST_CREDENTIALS, type SpawnedLedge } from '../helpers/ledge.ts';
import { startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { waitFor } from '../helpers/wait.ts';
import { call, type LedgeTarget } from '../notifications/api-helpers.ts';
import { callFunctionOn, uploadWorker, uploadWorkerAnswer, workerdClusterEnv } from './cluster-helpers.ts';

interface Node extends LedgeTarget {
  process: SpawnedLedge;
  functionsPort: number;
  dataDir: string;
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

/** The same Worker after `renamed_classes` Counter -> Tally. */
const TALLY_WORKER = COUNTER_WORKER.replace('export class Counter', 'export class Tally');

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
    for (const i of [1, 2]) nodes.push(await startNode(i, tempDir(`ledge-dostore-node${i}-`)));
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

  /** Starts node `i` on its data dir (again, after a stop). */
  async function startNode(i: number, dir: string): Promise<Node> {
    const spawned = await spawnLedge(dir, [], { ...env, LEDGE_NODE_ID: `node-${i}` });
    return {
      process: spawned,
      apiUrl: spawned.apiUrl,
      accountId: ACCOUNT,
      tokenHeaders: headers,
      functionsPort: Number(spawned.info['functions_port']),
      dataDir: dir,
    };
  }

  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.process.stop()));
    await database?.drop();
    await s3?.stop();
  });

  /** The account's Durable Object namespaces, through node 1. */
  async function namespaces(): Promise<{ id: string; class: string; script: string }[]> {
    const answer = await call(nodes[0]!, 'GET', `/accounts/${ACCOUNT}/workers/durable_objects/namespaces`);
    expect(answer.status).toBe(200);
    return answer.body.result as never;
  }

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
    const [namespace] = await namespaces();
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
  async function storedObjectKeys(script = 'counter'): Promise<string[]> {
    const sql = postgres(database.url, { max: 1 });
    try {
      const rows = await sql<
        { key: string }[]
      >`SELECT key FROM r2_objects WHERE key LIKE ${`engines/${ACCOUNT}/scripts/${script}/v1/do/%`}`;
      return rows.map((row) => row.key);
    } finally {
      await sql.end();
    }
  }

  it('a renamed class keeps its objects and their data on every node', async () => {
    const before = await namespaces();
    const binding = { type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Tally' };
    const migrations = {
      old_tag: 'v1',
      new_tag: 'v2',
      steps: [{ renamed_classes: [{ from: 'Counter', to: 'Tally' }] }],
    };
    const metadata = { compatibility_date: '2025-04-01', migrations };
    expect(await uploadWorker(nodes[1]!, 'counter', TALLY_WORKER, [binding], metadata)).toBe(200);
    const after = await namespaces();
    expect(after.map((n) => [n.id, n.class])).toEqual([[before[0]!.id, 'Tally']]);
    // Each object goes on from its stored count (1), through either node, once the new version serves there.
    for (const [i, node] of nodes.entries()) {
      const count = await waitFor(
        async () => {
          const answer = await callFunctionOn(node.functionsPort, host, `/add?name=object-${i}`);
          return answer.status === 200 && (JSON.parse(answer.body) as number);
        },
        `object-${i} through node ${i + 1}`,
        { timeoutMs: 60_000 },
      );
      expect(count).toBe(2);
    }
    expect((await listedObjects(nodes[0]!, after[0]!.id)).ids).toHaveLength(12);
  }, 240_000);

  it('refuses to transfer a class to another Worker, which would start it empty, and changes nothing', async () => {
    const binding = { type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Tally' };
    const migrations = {
      new_tag: 'v1',
      steps: [{ transferred_classes: [{ from: 'Tally', from_script: 'counter', to: 'Tally' }] }],
    };
    const metadata = { compatibility_date: '2025-04-01', migrations };
    const answer = await uploadWorkerAnswer(nodes[0]!, 'receiver', TALLY_WORKER, [binding], metadata);
    expect(answer.status).toBe(400);
    expect(answer.body.errors[0]?.code).toBe(10074);
    expect(answer.body.errors[0]?.message).toContain('several nodes');
    expect((await namespaces()).map((n) => [n.class, n.script])).toEqual([['Tally', 'counter']]);
    const scripts = await call(nodes[0]!, 'GET', `/accounts/${ACCOUNT}/workers/scripts/receiver/settings`);
    expect(scripts.status).toBe(404);
  });

  it('a deleted class takes its objects out of the cluster store', async () => {
    expect((await storedObjectKeys()).filter((key) => key.endsWith('/own.json'))).toHaveLength(12);
    const code = `export default { fetch() { return new Response('no objects'); } };`;
    const migrations = { old_tag: 'v2', new_tag: 'v3', steps: [{ deleted_classes: ['Tally'] }] };
    const metadata = { compatibility_date: '2025-04-01', migrations };
    const namespaceId = (await namespaces())[0]!.id;
    const copies = nodes.map((node) =>
      join(node.dataDir, 'durable-objects', ACCOUNT, 'cluster', 'counter', namespaceId),
    );
    for (const copy of copies) expect(existsSync(copy), copy).toBe(true);
    expect(await uploadWorker(nodes[1]!, 'counter', code, [], metadata)).toBe(200);
    expect(await storedObjectKeys()).toEqual([]);
    // Each node's working copy goes as well: at once on the node that took the deploy, after its reload elsewhere.
    for (const copy of copies) await waitFor(() => !existsSync(copy), `${copy} removed`, { timeoutMs: 30_000 });
  }, 240_000);

  it('a deleted Worker takes its objects out of the cluster store', async () => {
    const binding = { type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Counter' };
    const migrations = { new_tag: 'v1', steps: [{ new_sqlite_classes: ['Counter'] }] };
    const metadata = { compatibility_date: '2025-04-01', migrations };
    expect(await uploadWorker(nodes[0]!, 'second', COUNTER_WORKER, [binding], metadata)).toBe(200);
    await call(nodes[0]!, 'POST', `/accounts/${ACCOUNT}/workers/scripts/second/subdomain`, { enabled: true });
    const second = host.replace(/^counter\./, 'second.');
    for (const [i, node] of nodes.entries()) {
      await waitFor(
        async () => (await callFunctionOn(node.functionsPort, second, `/add?name=gone-${i}`)).status === 200,
        `gone-${i} through node ${i + 1}`,
        { timeoutMs: 60_000 },
      );
    }
    expect((await storedObjectKeys('second')).filter((key) => key.endsWith('/own.json'))).toHaveLength(2);
    const copies = nodes.map((node) => join(node.dataDir, 'durable-objects', ACCOUNT, 'cluster', 'second'));
    for (const copy of copies) expect(existsSync(copy), copy).toBe(true);
    const deleted = await call(nodes[1]!, 'DELETE', `/accounts/${ACCOUNT}/workers/scripts/second`);
    expect(deleted.status).toBe(200);
    expect(await storedObjectKeys('second')).toEqual([]);
    for (const copy of copies) await waitFor(() => !existsSync(copy), `${copy} removed`, { timeoutMs: 30_000 });
  }, 240_000);

  it('a node that was down when a class was deleted removes its copy of the objects as it starts', async () => {
    const binding = { type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Counter' };
    const created = { new_tag: 'v1', steps: [{ new_sqlite_classes: ['Counter'] }] };
    expect(
      await uploadWorker(nodes[0]!, 'third', COUNTER_WORKER, [binding], {
        compatibility_date: '2025-04-01',
        migrations: created,
      }),
    ).toBe(200);
    await call(nodes[0]!, 'POST', `/accounts/${ACCOUNT}/workers/scripts/third/subdomain`, { enabled: true });
    const third = host.replace(/^counter\./, 'third.');
    await waitFor(
      async () => (await callFunctionOn(nodes[1]!.functionsPort, third, '/add?name=away')).status === 200,
      'an object run through node 2',
      { timeoutMs: 60_000 },
    );
    const namespaceId = (await namespaces()).find((n) => n.script === 'third')!.id;
    const copy = join(nodes[1]!.dataDir, 'durable-objects', ACCOUNT, 'cluster', 'third', namespaceId);
    expect(existsSync(copy), copy).toBe(true);
    await nodes[1]!.process.stop();
    const deleted = { old_tag: 'v1', new_tag: 'v2', steps: [{ deleted_classes: ['Counter'] }] };
    const code = `export default { fetch() { return new Response('no objects'); } };`;
    expect(
      await uploadWorker(nodes[0]!, 'third', code, [], { compatibility_date: '2025-04-01', migrations: deleted }),
    ).toBe(200);
    expect(existsSync(copy)).toBe(true);
    nodes[1] = await startNode(2, nodes[1]!.dataDir);
    await waitFor(() => !existsSync(copy), `${copy} removed at start`, { timeoutMs: 30_000 });
  }, 240_000);
});
