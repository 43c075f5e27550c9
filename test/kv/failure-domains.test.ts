import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  accountSubdomain,
  api,
  callFunction,
  enableWorkersDev,
  functionsPort,
  tenant,
  uploadScript,
} from '../workers/helpers.ts';

/** PUT writes the body under a fresh key (values over 64 KiB become blob files); GET reads key `k`. */
const WORKER = `export default {
  async fetch(request, env) {
    if (request.method === 'PUT') {
      await env.KV.put('k' + Math.floor(Math.random() * 1000), await request.arrayBuffer());
      return new Response('stored');
    }
    const url = new URL(request.url);
    if (url.pathname === '/write') { await env.KV.put('k', url.searchParams.get('v')); return new Response('ok'); }
    return new Response(String(await env.KV.get('k')));
  },
};`;

async function boundScript(as: TestLedge, name: string): Promise<{ host: string; namespace: string }> {
  const created = await api(as, 'POST', `/accounts/${as.accountId}/storage/kv/namespaces`, { title: name });
  expect(created.status, JSON.stringify(created.body.errors)).toBe(200);
  const namespace = created.body.result.id as string;
  const upload = await uploadScript(as, name, {
    modules: { 'index.js': WORKER },
    metadata: { bindings: [{ type: 'kv_namespace', name: 'KV', namespace_id: namespace }] },
  });
  expect(upload.status, JSON.stringify(upload.body.errors)).toBe(200);
  expect((await enableWorkersDev(as, name)).status).toBe(200);
  return { host: `${name}.${await accountSubdomain(as)}.localhost`, namespace };
}

const p99 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length * 0.99)] ?? NaN;

/** One account's KV flood, or its engines process dying, leaves another account's KV answering. */
describe('KV failure domains', () => {
  let ledge: TestLedge;
  let bravo: TestLedge;
  let flood: { host: string };
  let steady: { host: string };

  beforeAll(async () => {
    ledge = await startLedge();
    bravo = await tenant(ledge, 'Bravo');
    flood = await boundScript(ledge, 'flood');
    steady = await boundScript(bravo, 'steady');
    expect((await callFunction(functionsPort(ledge), steady.host, '/write?v=steady')).text).toBe('ok');
  });
  afterAll(async () => ledge?.close());

  /** `count` reads of B's key, each checked; their latencies in ms. */
  async function readSteady(count: number): Promise<number[]> {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const latencies: number[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const started = performance.now();
        const answer = await callFunction(functionsPort(ledge), steady.host, '/', { agent });
        latencies.push(performance.now() - started);
        expect([answer.status, answer.text]).toEqual([200, 'steady']);
      }
    } finally {
      agent.destroy();
    }
    return latencies;
  }

  it("keeps B's reads answering, each one right, while A floods its own namespace with large writes", async () => {
    const quiet = await readSteady(100);
    let running = true;
    let floodWrites = 0;
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const body = Buffer.alloc(100 * 1024, 1);
    const writers = Array.from({ length: 8 }, async () => {
      while (running) {
        const answer = await callFunction(functionsPort(ledge), flood.host, '/', { method: 'PUT', body, agent });
        expect(answer.text).toBe('stored');
        floodWrites++;
      }
    });
    try {
      await waitFor(() => floodWrites >= 20, 'the flood under way');
      const loaded = await readSteady(100);
      // Figures for the log (timing bounds belong in bench/): B's p99 alone and under A's flood.
      console.log(
        `KV flood: B's read p99 ${p99(quiet).toFixed(1)} ms alone, ${p99(loaded).toFixed(1)} ms while A wrote ${floodWrites} x 100 KiB`,
      );
    } finally {
      running = false;
      await Promise.all(writers);
      agent.destroy();
    }
  });

  it("keeps B's KV answering while A's engines process is killed, and A's comes back with its data", async () => {
    const engines = ledge.server.platform.engines;
    const pidA = engines.pid(ledge.accountId)!;
    const pidB = engines.pid(bravo.accountId)!;
    expect(pidA).not.toBe(pidB);
    process.kill(pidA, 'SIGKILL');
    await readSteady(20);
    await waitFor(
      () => engines.pid(ledge.accountId) !== undefined && engines.pid(ledge.accountId) !== pidA,
      "A's restart",
    );
    await engines.ensure(ledge.accountId);
    expect(engines.pid(bravo.accountId)).toBe(pidB);
    const namespaces = `/accounts/${ledge.accountId}/storage/kv/namespaces`;
    const floodNamespace = (await api(ledge, 'GET', namespaces)).body.result[0].id as string;
    const keys = await api(ledge, 'GET', `${namespaces}/${floodNamespace}/keys`);
    expect((keys.body.result as unknown[]).length).toBeGreaterThan(0);
  });
});
