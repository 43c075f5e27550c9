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
} from './helpers.ts';

/**
 * Data failure domains measured: one account's KV flood or long D1 queries do not move another account's p99.
 * Each account's namespaces and databases live in its own engines process (one engine host per account), so what
 * the noisy account holds is its own engine; what is shared is the functions front and the machine.
 */

/** A's script: PUT writes 100 KiB under a fresh key; GET /long counts to 3 million in SQLite. */
const NOISY = `export default {
  async fetch(request, env) {
    if (request.method === 'PUT') {
      await env.KV.put('k' + Math.floor(Math.random() * 1000), await request.arrayBuffer());
      return new Response('stored');
    }
    const { results } = await env.DB.prepare(
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT COUNT(*) AS n FROM c',
    ).all();
    return new Response(String(results[0].n));
  },
};`;

/** B's script: /kv reads one key, /d1 selects one row by its key. */
const STEADY = `export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (pathname === '/kv') return new Response(await env.KV.get('k'));
    const row = await env.DB.prepare('SELECT body FROM notes WHERE id = ?').bind(2).first();
    return new Response(row.body);
  },
};`;

async function boundScript(as: TestLedge, name: string, source: string): Promise<{ host: string; database: string }> {
  const namespace = await api(as, 'POST', `/accounts/${as.accountId}/storage/kv/namespaces`, { title: name });
  expect(namespace.status, JSON.stringify(namespace.body.errors)).toBe(200);
  const database = await api(as, 'POST', `/accounts/${as.accountId}/d1/database`, { name });
  expect(database.status, JSON.stringify(database.body.errors)).toBe(200);
  const uuid = database.body.result.uuid as string;
  const upload = await uploadScript(as, name, {
    modules: { 'index.js': source },
    metadata: {
      bindings: [
        { type: 'kv_namespace', name: 'KV', namespace_id: namespace.body.result.id as string },
        { type: 'd1', name: 'DB', id: uuid },
      ],
    },
  });
  expect(upload.status, JSON.stringify(upload.body.errors)).toBe(200);
  expect((await enableWorkersDev(as, name)).status).toBe(200);
  return { host: `${name}.${await accountSubdomain(as)}.localhost`, database: uuid };
}

const percentile = (samples: number[], p: number) =>
  [...samples].sort((a, b) => a - b)[Math.floor((samples.length * p) / 100)] ?? NaN;
const p99 = (samples: number[]) => percentile(samples, 99);
/** p50 / p99 / max, for the log. */
const tail = (samples: number[]) =>
  `p50 ${percentile(samples, 50).toFixed(1)} p99 ${p99(samples).toFixed(1)} max ${Math.max(...samples).toFixed(0)} ms`;
/**
 * The loaded tail against the quiet tail of the same run (measured before and after the load, both windows
 * together), so that a busy machine, which slows both, does not fail it.
 */
const floodedAtMost = (quiet: number[]) => 3 * p99(quiet) + 150;

describe("data failure domains: another account's p99", () => {
  let ledge: TestLedge;
  let noisy: { host: string };
  let steady: { host: string; database: string };

  beforeAll(async () => {
    ledge = await startLedge();
    const bravo = await tenant(ledge, 'Bravo');
    noisy = await boundScript(ledge, 'noisy', NOISY);
    steady = await boundScript(bravo, 'steady', STEADY);
    const seeded = await api(bravo, 'POST', `/accounts/${bravo.accountId}/d1/database/${steady.database}/query`, {
      sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('one'), ('two')",
    });
    expect(seeded.status, JSON.stringify(seeded.body.errors)).toBe(200);
    const namespaces = await api(bravo, 'GET', `/accounts/${bravo.accountId}/storage/kv/namespaces`);
    const written = await fetch(
      `${bravo.apiUrl}/accounts/${bravo.accountId}/storage/kv/namespaces/${namespaces.body.result[0].id}/values/k`,
      { method: 'PUT', headers: bravo.tokenHeaders, body: 'steady' },
    );
    expect(written.status).toBe(200);
  });
  afterAll(async () => ledge?.close());

  /** `count` calls of B's `path`, each checked; their latencies in ms. */
  async function readSteady(path: string, expected: string, count: number): Promise<number[]> {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const latencies: number[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const started = performance.now();
        const answer = await callFunction(functionsPort(ledge), steady.host, path, { agent });
        latencies.push(performance.now() - started);
        expect([answer.status, answer.text]).toEqual([200, expected]);
      }
    } finally {
      agent.destroy();
    }
    return latencies;
  }

  /** `clients` of A calling its script in a loop until stopped; how many answered. */
  function noise(clients: number, call: (agent: Agent) => Promise<void>) {
    let running = true;
    const served = { count: 0 };
    const agent = new Agent({ keepAlive: true, maxSockets: clients });
    const loops = Array.from({ length: clients }, async () => {
      while (running) {
        await call(agent);
        served.count++;
      }
    });
    return {
      served,
      async stop() {
        running = false;
        await Promise.all(loops);
        agent.destroy();
      },
    };
  }

  it("A's KV flood (8 writers of 100 KiB) leaves B's KV and D1 p99 where they were", async () => {
    const quietKv = await readSteady('/kv', 'steady', 200);
    const quietD1 = await readSteady('/d1', 'two', 200);
    const body = Buffer.alloc(100 * 1024, 1);
    const flood = noise(8, async (agent) => {
      const answer = await callFunction(functionsPort(ledge), noisy.host, '/', { method: 'PUT', body, agent });
      expect(answer.text).toBe('stored');
    });
    let loadedKv: number[];
    let loadedD1: number[];
    try {
      await waitFor(() => flood.served.count >= 20, 'the flood under way');
      loadedKv = await readSteady('/kv', 'steady', 200);
      loadedD1 = await readSteady('/d1', 'two', 200);
    } finally {
      await flood.stop();
    }
    quietKv.push(...(await readSteady('/kv', 'steady', 200)));
    quietD1.push(...(await readSteady('/d1', 'two', 200)));
    const report =
      `KV flood: B's KV get ${tail(quietKv)} alone, ${tail(loadedKv)} flooded; ` +
      `D1 select ${tail(quietD1)} alone, ${tail(loadedD1)} flooded; ` +
      `A wrote ${flood.served.count} x 100 KiB`;
    console.log(report);
    expect(p99(loadedKv), report).toBeLessThan(floodedAtMost(quietKv));
    expect(p99(loadedD1), report).toBeLessThan(floodedAtMost(quietD1));
  }, 180_000);

  it("A's long D1 queries (two at a time, back to back) leave B's D1 and KV p99 where they were", async () => {
    const quietD1 = await readSteady('/d1', 'two', 200);
    const quietKv = await readSteady('/kv', 'steady', 200);
    const long = noise(2, async (agent) => {
      const answer = await callFunction(functionsPort(ledge), noisy.host, '/long', { agent });
      expect([answer.status, answer.text]).toEqual([200, '3000000']);
    });
    let loadedD1: number[];
    let loadedKv: number[];
    try {
      // The first answer says A's engine is counting; each client sends its next query at once, so one is always
      // in A's engine (which runs them one at a time) while B is measured.
      await waitFor(() => long.served.count >= 1, 'the first long query answered');
      loadedD1 = await readSteady('/d1', 'two', 200);
      loadedKv = await readSteady('/kv', 'steady', 200);
    } finally {
      await long.stop();
    }
    quietD1.push(...(await readSteady('/d1', 'two', 200)));
    quietKv.push(...(await readSteady('/kv', 'steady', 200)));
    const report =
      `long D1 queries: B's D1 select ${tail(quietD1)} alone, ${tail(loadedD1)} meanwhile; ` +
      `KV get ${tail(quietKv)} alone, ${tail(loadedKv)} meanwhile; ` +
      `A's long queries answered: ${long.served.count}`;
    console.log(report);
    expect(p99(loadedD1), report).toBeLessThan(floodedAtMost(quietD1));
    expect(p99(loadedKv), report).toBeLessThan(floodedAtMost(quietKv));
  }, 180_000);
});
