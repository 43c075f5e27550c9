import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../helpers/backends.ts';
import { spawnLedge, tempDir, TEST_CREDENTIALS, type SpawnedLedge } from '../helpers/ledge.ts';
import { startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { waitFor } from '../helpers/wait.ts';
import { call, type LedgeTarget } from '../notifications/api-helpers.ts';
import { callFunctionOn, workerdClusterEnv } from './cluster-helpers.ts';

/** One `ledge server` of the three, restartable on its own data dir. */
interface Node extends LedgeTarget {
  name: string;
  dataDir: string;
  process: SpawnedLedge;
  functionsPort: number;
}

const ACCOUNT = TEST_CREDENTIALS.accountId;
const headers = { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` };

/**
 * A counter object that records every increment it acknowledges (its number, in SQLite) and says which live
 * instance answered: an id made when the instance is constructed, so two nodes answering from two instances of
 * one object at once would show two ids.
 */
const COUNTER_WORKER = `
import { DurableObject } from 'cloudflare:workers';

export class Counter extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.instance = crypto.randomUUID();
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS increments (n INTEGER PRIMARY KEY)');
  }
  add(n) {
    this.ctx.storage.sql.exec('INSERT INTO increments (n) VALUES (?)', n);
    return this.read();
  }
  read() {
    const count = this.ctx.storage.sql.exec('SELECT count(*) AS c FROM increments').one().c;
    return { count, instance: this.instance };
  }
  list() {
    return this.ctx.storage.sql.exec('SELECT n FROM increments ORDER BY n').toArray().map((row) => row.n);
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const counter = env.COUNTER.getByName(url.searchParams.get('name') ?? 'main');
    if (url.pathname === '/add') return Response.json(await counter.add(Number(url.searchParams.get('n'))));
    if (url.pathname === '/read') return Response.json(await counter.read());
    if (url.pathname === '/list') return Response.json(await counter.list());
    return new Response('not found', { status: 404 });
  },
};
`;

/** A Workflow that does a step, then waits for an event and returns its payload. */
const FLOW_WORKER = `import { WorkflowEntrypoint } from 'cloudflare:workers';
export class Flow extends WorkflowEntrypoint {
  async run(event, step) {
    await step.do('one', async () => event.payload.n ?? 0);
    const e = await step.waitForEvent('go', { type: 'go', timeout: '1 hour' });
    return e.payload;
  }
}
export default { fetch() { return new Response('ok'); } };`;

/** A producer of the queue `jobs` and its consumer, which records each message's number in one object. */
const QUEUE_WORKER = `import { DurableObject } from 'cloudflare:workers';
export class Seen extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS seen (n INTEGER PRIMARY KEY)');
  }
  see(numbers) {
    for (const n of numbers) this.ctx.storage.sql.exec('INSERT OR IGNORE INTO seen (n) VALUES (?)', n);
  }
  list() {
    return this.ctx.storage.sql.exec('SELECT n FROM seen ORDER BY n').toArray().map((row) => row.n);
  }
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/send') {
      await env.QUEUE.send({ n: Number(url.searchParams.get('n')) });
      return new Response('sent');
    }
    if (url.pathname === '/seen') return Response.json(await env.SEEN.getByName('all').list());
    return new Response('not found', { status: 404 });
  },
  async queue(batch, env) {
    await env.SEEN.getByName('all').see(batch.messages.map((message) => message.body.n));
    batch.ackAll();
  },
};`;

interface CounterAnswer {
  ok: boolean;
  status: number;
  count?: number;
  instance?: string;
  body: string;
}

/**
 * Three real `ledge server` processes on one PostgreSQL and one S3 store (Swift's s3api): the process of a script
 * that hosts Durable Objects is, on each node, one instance of the script's workerd cluster, so each object runs on
 * one node at a time and every node reaches it.
 */
describe('Durable Objects of a user script on three nodes (workerd cluster mode)', () => {
  let s3: S3Server;
  let database: { url: string; drop(): Promise<void> };
  let env: NodeJS.ProcessEnv;
  let host: string;
  const nodes: Node[] = [];

  async function start(name: string, dataDir: string): Promise<Node> {
    const spawned = await spawnLedge(dataDir, [], { ...env, LEDGE_NODE_ID: name });
    // The nodes' warnings (workerd's cluster lines among them) into a file, to see why a run failed.
    const log = process.env['OBJECTS_CLUSTER_LOG'];
    if (log) spawned.child.stderr?.on('data', (d: Buffer) => appendFileSync(log, `[${name}] ${d}`));
    return {
      name,
      dataDir,
      process: spawned,
      apiUrl: spawned.apiUrl,
      accountId: ACCOUNT,
      tokenHeaders: headers,
      functionsPort: Number(spawned.info['functions_port']),
    };
  }

  async function counter(node: Node, path: string, name: string, n?: number): Promise<CounterAnswer> {
    const query = `?name=${name}${n === undefined ? '' : `&n=${n}`}`;
    const answer = await callFunctionOn(node.functionsPort, host, `${path}${query}`);
    if (answer.status !== 200) return { ok: false, status: answer.status, body: answer.body };
    const parsed = JSON.parse(answer.body) as { count: number; instance: string };
    return { ok: true, status: 200, count: parsed.count, instance: parsed.instance, body: answer.body };
  }

  async function list(node: Node, name: string): Promise<number[]> {
    const answer = await callFunctionOn(node.functionsPort, host, `/list?name=${name}`);
    expect(answer.status, answer.body).toBe(200);
    return JSON.parse(answer.body) as number[];
  }

  /** Uploads a one-module script through node 1, as wrangler deploys it. */
  async function upload(name: string, code: string, metadata: { bindings: unknown[]; migrations?: unknown }) {
    const form = new FormData();
    form.set('metadata', JSON.stringify({ main_module: 'index.js', compatibility_date: '2025-04-01', ...metadata }));
    form.set('index.js', new File([code], 'index.js', { type: 'application/javascript+module' }));
    const uploaded = await fetch(`${nodes[0]!.apiUrl}/accounts/${ACCOUNT}/workers/scripts/${name}`, {
      method: 'PUT',
      headers,
      body: form,
    });
    expect(uploaded.status, await uploaded.text()).toBe(200);
  }

  /**
   * Turns on the script's workers.dev host and waits until every node serves it (each reads the deploy made on
   * node 1 from the database on its announcement); returns that host.
   */
  async function serveOnEveryNode(name: string): Promise<string> {
    const one = nodes[0]!;
    const enabled = await call(one, 'POST', `/accounts/${ACCOUNT}/workers/scripts/${name}/subdomain`, {
      enabled: true,
    });
    expect(enabled.status).toBe(200);
    const result = (await call(one, 'GET', `/accounts/${ACCOUNT}/workers/subdomain`)).body.result;
    const scriptHost = `${name}.${(result as { subdomain: string }).subdomain}.localhost`;
    for (const node of nodes) {
      await waitFor(
        async () => (await callFunctionOn(node.functionsPort, scriptHost, '/none')).status === 404,
        `${node.name} serves ${name}`,
        { timeoutMs: 60_000 },
      );
    }
    return scriptHost;
  }

  beforeAll(async () => {
    s3 = await startS3Server();
    database = await freshPostgresDatabase();
    env = workerdClusterEnv(s3, database.url);
    // One at a time: the first bootstraps the account.
    for (const i of [1, 2, 3]) nodes.push(await start(`node-${i}`, tempDir(`ledge-objects-node${i}-`)));

    const [one] = nodes as [Node];
    await upload('counter', COUNTER_WORKER, {
      bindings: [{ type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Counter' }],
      migrations: { new_tag: 'v1', steps: [{ new_sqlite_classes: ['Counter'] }] },
    });
    host = await serveOnEveryNode('counter');
    // The workerd build in use sometimes aborts an instance at about its first call to another node (an
    // upstream fault, docs/durable-objects.md: the process restarts, the request it served fails). Idempotent
    // reads through nodes 2 and 3 of an object node 1 made open those connections first, retried until they
    // answer, so the tests below count what Ledge does with the objects.
    expect((await counter(one, '/add', 'warm-up', 0)).ok).toBe(true);
    for (const node of nodes.slice(1)) {
      await waitFor(async () => (await counter(node, '/read', 'warm-up')).ok, `${node.name} reaches node 1`, {
        timeoutMs: 60_000,
      });
    }
  }, 240_000);

  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.process.stop('SIGTERM')));
    await database?.drop();
    await s3?.stop();
  }, 60_000);

  it('reads through node 3 a counter incremented through node 1, from the same live instance', async () => {
    const [one, two, three] = nodes as [Node, Node, Node];
    const answers: CounterAnswer[] = [];
    for (let n = 0; n < 5; n++) answers.push(await counter(one, '/add', 'shared', n));
    expect(answers.map((a) => a.count)).toEqual([1, 2, 3, 4, 5]);
    const read = await counter(three, '/read', 'shared');
    expect(read.count).toBe(5);
    // One object, one instance: the object node 1 made answers node 3's request too.
    expect(read.instance).toBe(answers[0]!.instance);
    // Increments through every node land in the one instance, in order.
    const more = [await counter(two, '/add', 'shared', 5), await counter(three, '/add', 'shared', 6)];
    expect(more.map((a) => [a.count, a.instance])).toEqual([
      [6, answers[0]!.instance],
      [7, answers[0]!.instance],
    ]);
    expect(await list(one, 'shared')).toEqual([0, 1, 2, 3, 4, 5, 6]);
  }, 120_000);

  it('fails no request while a new version is deployed under traffic (each node hands over, then runs it)', async () => {
    const [one] = nodes as [Node];
    const failures: string[] = [];
    const written: number[] = [];
    let next = 10_000;
    let stopping = false;
    let turn = 0;
    const client = async () => {
      while (!stopping) {
        const node = nodes[turn++ % nodes.length]!;
        const n = next++;
        const answer = await counter(node, '/add', 'redeploy', n);
        if (answer.ok) written.push(n);
        else failures.push(`increment ${n} via ${node.name}: ${answer.status} ${answer.body.slice(0, 200)}`);
      }
    };
    const clients = [client(), client()];
    await waitFor(() => written.length >= 20, 'increments before the deploy', { timeoutMs: 60_000 });
    for (const version of ['v2', 'v3']) {
      await upload('counter', `${COUNTER_WORKER}\n// ${version}\n`, {
        bindings: [{ type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Counter' }],
      });
      const before = written.length;
      await waitFor(() => written.length >= before + 30, `increments after ${version}`, { timeoutMs: 90_000 });
    }
    stopping = true;
    await Promise.all(clients);
    console.info(`redeploys under traffic: ${written.length} increments, ${failures.length} failed requests`);
    // A call made twice would fail on its number's primary key: no failure also means none ran twice.
    expect(failures).toEqual([]);
    const present = new Set(await list(one, 'redeploy'));
    expect(written.filter((n) => !present.has(n))).toEqual([]);
  }, 240_000);

  it('runs a Workflow instance created through node 1 on one node: node 3 sees it wait, node 2 sends its event', async () => {
    const [one, two, three] = nodes as [Node, Node, Node];
    await upload('flow-worker', FLOW_WORKER, {
      bindings: [{ type: 'workflow', name: 'FLOW', workflow_name: 'flow', class_name: 'Flow' }],
    });
    const base = `/accounts/${ACCOUNT}/workflows/flow`;
    expect((await call(one, 'PUT', base, { script_name: 'flow-worker', class_name: 'Flow' })).status).toBe(200);
    const instance = async (node: Node) =>
      (await call(node, 'GET', `${base}/instances/w1`)).body.result as { status?: string; output?: unknown } | null;
    // Every node runs the Worker (and so its Workflows engine) before the instance is made.
    for (const node of nodes) {
      await waitFor(async () => (await call(node, 'GET', `${base}/instances`)).status === 200, `${node.name} runs it`, {
        timeoutMs: 60_000,
      });
    }
    const created = await call(one, 'POST', `${base}/instances`, { instance_id: 'w1', params: { n: 2 } });
    expect(created.status, JSON.stringify(created.body.errors)).toBe(200);
    await waitFor(async () => (await instance(three))?.status === 'waiting' || undefined, 'node 3 sees w1 wait', {
      timeoutMs: 60_000,
    });
    expect((await call(two, 'POST', `${base}/instances/w1/events/go`, { ok: 1 })).status).toBe(200);
    await waitFor(async () => (await instance(three))?.status === 'complete' || undefined, 'w1 completes', {
      timeoutMs: 60_000,
    });
    expect((await instance(one))?.output).toBe('{"ok":1}');
  }, 180_000);

  it('keeps one queue across the nodes: sent through nodes 2 and 3, counted and consumed through node 1', async () => {
    const [one, two, three] = nodes as [Node, Node, Node];
    const created = await call(one, 'POST', `/accounts/${ACCOUNT}/queues`, { queue_name: 'jobs' });
    expect(created.status, JSON.stringify(created.body.errors)).toBe(200);
    const queue = `/accounts/${ACCOUNT}/queues/${(created.body.result as { queue_id: string }).queue_id}`;
    await upload('jobs', QUEUE_WORKER, {
      bindings: [
        { type: 'queue', name: 'QUEUE', queue_name: 'jobs' },
        { type: 'durable_object_namespace', name: 'SEEN', class_name: 'Seen' },
      ],
      migrations: { new_tag: 'v1', steps: [{ new_sqlite_classes: ['Seen'] }] },
    });
    const jobs = await serveOnEveryNode('jobs');
    // No consumer yet: what nodes 2 and 3 send waits in the queue's one shard, which node 1 counts.
    for (let n = 0; n < 20; n++) {
      const sent = await callFunctionOn((n % 2 === 0 ? two : three).functionsPort, jobs, `/send?n=${n}`);
      expect(sent.status, sent.body).toBe(200);
    }
    const backlog = async (node: Node) =>
      ((await call(node, 'GET', `${queue}/metrics`)).body.result as { backlog_count?: number } | null)?.backlog_count;
    expect(await backlog(one)).toBe(20);
    const consumer = await call(one, 'POST', `${queue}/consumers`, {
      type: 'worker',
      script_name: 'jobs',
      settings: { batch_size: 5, max_wait_time_ms: 100 },
    });
    expect(consumer.status, JSON.stringify(consumer.body.errors)).toBe(200);
    const seen = async (node: Node) =>
      JSON.parse((await callFunctionOn(node.functionsPort, jobs, '/seen')).body || '[]') as number[];
    await waitFor(async () => (await seen(three)).length === 20 || undefined, 'every message consumed', {
      timeoutMs: 90_000,
    });
    expect(await seen(one)).toEqual(Array.from({ length: 20 }, (_, n) => n));
    await waitFor(async () => (await backlog(two)) === 0 || undefined, 'an empty queue', { timeoutMs: 60_000 });
  }, 240_000);

  it('runs the object on another node after the owner is killed with SIGKILL, with every acknowledged increment', async () => {
    const [one, two, three] = nodes as [Node, Node, Node];
    // Node 2 claims the object: its first request is served there.
    const first = await counter(two, '/add', 'kill', 0);
    expect(first.ok, first.body).toBe(true);
    const acknowledged: number[] = [0];
    const failed: string[] = [];
    const instances = new Set<string>();
    let next = 1;
    let killed = false;
    let afterKill = 0;
    let firstAfterKill = 0;
    const writer = async (via: Node, until: () => boolean) => {
      while (!until()) {
        const n = next++;
        const answer = await counter(via, '/add', 'kill', n);
        if (answer.ok) {
          acknowledged.push(n);
          if (killed && via !== two) {
            instances.add(answer.instance!);
            if (afterKill++ === 0) firstAfterKill = Date.now();
          }
        } else failed.push(`${n} via ${via.name}: ${answer.status} ${answer.body.slice(0, 200)}`);
      }
    };
    const done = () => killed && afterKill >= 20;
    const writers = [writer(two, () => killed), writer(three, done), writer(one, done)];
    await waitFor(() => acknowledged.length >= 30, '30 acknowledged increments', { timeoutMs: 60_000, everyMs: 10 });
    const killedAt = Date.now();
    await two.process.stop('SIGKILL');
    killed = true;
    await Promise.all(writers);

    const present = new Set(await list(one, 'kill'));
    const lost = acknowledged.filter((n) => !present.has(n));
    console.info(
      `Durable Object increments: ${acknowledged.length} acknowledged (${afterKill} after the kill), ` +
        `${failed.length} failed, ${present.size} found, ${lost.length} acknowledged ones lost; first increment ` +
        `acknowledged by another node ${firstAfterKill - killedAt} ms after the kill; ` +
        `${instances.size} instance(s) answered after it`,
    );
    expect(lost).toEqual([]);
    expect(afterKill).toBeGreaterThanOrEqual(20);
    // After the takeover, one instance on one node answers both survivors.
    expect(instances.size).toBe(1);
    expect((await counter(three, '/read', 'kill')).count).toBe(present.size);

    nodes[1] = await start(two.name, two.dataDir);
  }, 180_000);

  it('fails no request while the nodes restart one after another (SIGTERM, hand-off, back in rotation)', async () => {
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
    const client = async (object: string) => {
      while (!stopping) {
        const n = next++;
        const node = pick();
        const answer = await counter(node, '/add', object, n);
        if (answer.ok) written.push(n);
        else
          failures.push(`increment ${n} of ${object} via ${node.name}: ${answer.status} ${answer.body.slice(0, 200)}`);
        const read = await counter(pick(), '/read', object);
        if (!read.ok) failures.push(`read of ${object}: ${read.status} ${read.body.slice(0, 200)}`);
      }
    };
    const clients = [client('rolling-a'), client('rolling-b')];
    for (const [i, node] of nodes.entries()) {
      await waitFor(() => written.length >= (i + 1) * 10, 'increments between restarts', { timeoutMs: 60_000 });
      inRotation.delete(node.name);
      // Let requests already sent to it finish, as a load balancer drains a backend.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await node.process.stop('SIGTERM')).toBe(0);
      nodes[i] = await start(node.name, node.dataDir);
      await waitFor(async () => (await fetch(new URL('/healthz', nodes[i]!.apiUrl))).status === 200, 'healthz');
      await waitFor(
        async () => (await callFunctionOn(nodes[i]!.functionsPort, host, '/none')).status === 404,
        `${node.name} serves again`,
        { timeoutMs: 60_000 },
      );
      inRotation.add(node.name);
    }
    await waitFor(() => written.length >= 40, 'increments after the last restart', { timeoutMs: 60_000 });
    stopping = true;
    await Promise.all(clients);
    console.info(`rolling restart: ${written.length} increments, ${failures.length} failed requests`);
    expect(failures).toEqual([]);
    const present = new Set([...(await list(nodes[0]!, 'rolling-a')), ...(await list(nodes[0]!, 'rolling-b'))]);
    expect(written.filter((n) => !present.has(n))).toEqual([]);
    expect(present.size).toBe(written.length);
  }, 300_000);
});
