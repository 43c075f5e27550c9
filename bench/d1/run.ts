// Benchmark: a D1 point select and an insert through a function, on Ledge, on the same engine (workerd's
// d1.js) in a bare workerd with no Ledge code (the ceiling: function and engine in one process), and on
// Miniflare (what `wrangler dev` runs), side by side in one run, with wrk (-t1 -c32, keep-alive).
// Targets: Ledge >= 85% of the ceiling and >= 3x Miniflare on the select; inserts with p99. Besides req/s, the
// CPU each process spent per request (/proc utime + stime over the run, divided by the requests), which hardly
// moves when other work takes the cores of a shared machine, where req/s does.
// Usage: node bench/d1/run.ts [-- --seconds 10 --rounds 3]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Agent, request as undiciRequest } from 'undici';
import { numberArgument } from '../arguments.ts';
import { benchServerArgs, freePort, stop } from '../functions/processes.ts';
import { cpuPerRequest, cpuSnapshot, loadAverage } from '../process-cpu.ts';
import { runWrk, type WrkResult } from '../functions/wrk.ts';
import { serializeConfig } from '../../src/workerd/config/serialize.ts';
import { workerdBinary } from '../../src/workerd/workerd-process.ts';
import { SCHEMA, SEED, ROWS } from './seed.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const WORKER = join(import.meta.dirname, 'worker.js');
const SECONDS = numberArgument('--seconds', 10);
const ROUNDS = numberArgument('--rounds', 3);
const CREDS = {
  email: 'bench@example.com',
  key: '0123456789abcdef0123456789abcdef01234',
  account: '0123456789abcdef0123456789abcdef',
};

interface Target {
  name: string;
  host: string;
  port: number;
  pid: number;
}

async function main() {
  console.log(`load average before: ${loadAverage()}`);
  const work = mkdtempSync(join(tmpdir(), 'ledge-bench-d1-'));
  const children: ChildProcess[] = [];
  try {
    const ledge = await startLedge(work);
    children.push(ledge.child);
    const ceiling = await startBareWorkerd(work);
    children.push(ceiling.child);
    const miniflare = await startMiniflare(work);
    children.push(miniflare.child);
    const targets = [ledge.target, ceiling.target, miniflare.target];
    const samples = new Map<string, Map<string, number[]>>(targets.map((t) => [t.name, new Map()]));
    const add = (target: string, metric: string, value: number) => {
      const perTarget = samples.get(target)!;
      perTarget.set(metric, [...(perTarget.get(metric) ?? []), value]);
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const scenario of ['select', 'insert'] as const) {
        for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
          const before = cpuSnapshot(target.pid);
          const r: WrkResult = await runWrk(
            `http://127.0.0.1:${target.port}`,
            scenario === 'select'
              ? { method: 'GET', path: `/?id=${1 + (round % ROWS)}`, headers: { Host: target.host } }
              : { method: 'PUT', path: '/', headers: { Host: target.host }, bodyBytes: 1, keys: 1 },
            work,
            SECONDS,
          );
          add(target.name, `${scenario}_rps`, r.requestsPerSec);
          add(target.name, `${scenario}_p50_ms`, r.p50Ms);
          add(target.name, `${scenario}_p99_ms`, r.p99Ms);
          add(target.name, `${scenario}_errors`, r.errors + r.non2xx);
          const cpuUs = cpuPerRequest(before, cpuSnapshot(target.pid), r.requestsPerSec * SECONDS);
          for (const [label, us] of Object.entries(cpuUs)) add(target.name, `${scenario}_cpu_us ${label}`, us);
        }
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const results = Object.fromEntries(
      [...samples].map(([name, metrics]) => [name, Object.fromEntries([...metrics].map(([m, v]) => [m, median(v)]))]),
    ) as Record<string, Record<string, number>>;
    const [l, c, m] = [results['ledge']!, results['workerd_d1']!, results['miniflare']!];
    console.log(JSON.stringify(results, null, 2));
    console.log(
      `select: ledge ${l['select_rps']!.toFixed(0)} req/s = ${((100 * l['select_rps']!) / c['select_rps']!).toFixed(0)}% of bare workerd ` +
        `(${c['select_rps']!.toFixed(0)}), ${(l['select_rps']! / m['select_rps']!).toFixed(1)}x Miniflare (${m['select_rps']!.toFixed(0)}); ` +
        `insert: ledge ${l['insert_rps']!.toFixed(0)} req/s p99 ${l['insert_p99_ms']!.toFixed(1)} ms, ` +
        `bare ${c['insert_rps']!.toFixed(0)} p99 ${c['insert_p99_ms']!.toFixed(1)} ms, miniflare ${m['insert_rps']!.toFixed(0)} p99 ${m['insert_p99_ms']!.toFixed(1)} ms`,
    );
    const cpu = (r: Record<string, number>) => r['select_cpu_us total']!;
    console.log(
      `select CPU per request: Ledge ${cpu(l)} µs, bare workerd ${cpu(c)} µs, Miniflare ${cpu(m)} µs ` +
        `(${(cpu(m) / cpu(l)).toFixed(2)}x Ledge's)`,
    );
    console.log(`load average after: ${loadAverage()}`);
  } finally {
    await Promise.all(children.map(stop));
    rmSync(work, { recursive: true, force: true });
  }
}

/** `ledge server` (through bin/ledge), a database seeded through the API, the function deployed on workers.dev. */
async function startLedge(work: string): Promise<{ child: ChildProcess; target: Target }> {
  const [apiPort, fnPort] = [await freePort(), await freePort()];
  const child = spawn(join(ROOT, 'bin/ledge'), benchServerArgs(ROOT, join(work, 'ledge'), apiPort, fnPort), {
    env: {
      ...process.env,
      LEDGE_LOG_LEVEL: 'warn',
      LEDGE_FUNCTIONS_PROCESSES: '1',
      LEDGE_BOOTSTRAP_EMAIL: CREDS.email,
      LEDGE_BOOTSTRAP_API_KEY: CREDS.key,
      LEDGE_BOOTSTRAP_ACCOUNT_ID: CREDS.account,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((r) => createInterface({ input: child.stdout! }).once('line', r));
  child.stdout!.resume();
  const base = `http://127.0.0.1:${apiPort}/client/v4/accounts/${CREDS.account}`;
  const headers = { 'x-auth-email': CREDS.email, 'x-auth-key': CREDS.key };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { success: boolean; result: Record<string, unknown>; errors: unknown[] };
    if (!json.success) throw new Error(`${method} ${path}: ${JSON.stringify(json.errors)}`);
    return json.result;
  };
  const db = await call('POST', '/d1/database', { name: 'bench' });
  await call('POST', `/d1/database/${String(db['uuid'])}/query`, {
    batch: [{ sql: SCHEMA }, ...SEED.map((sql) => ({ sql }))],
  });
  const form = new FormData();
  form.set(
    'metadata',
    JSON.stringify({
      main_module: 'index.js',
      compatibility_date: '2025-01-01',
      bindings: [{ name: 'DB', type: 'd1', id: db['uuid'] }],
    }),
  );
  form.set('index.js', new File([readFileSync(WORKER)], 'index.js', { type: 'application/javascript+module' }));
  const upload = await fetch(`${base}/workers/scripts/d1-bench`, { method: 'PUT', headers, body: form });
  if (!upload.ok) throw new Error(`upload failed: ${await upload.text()}`);
  await fetch(`${base}/workers/scripts/d1-bench/subdomain`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: '{"enabled":true}',
  });
  const { subdomain } = (await call('GET', '/workers/subdomain')) as { subdomain: string };
  return {
    child,
    target: { name: 'ledge', host: `d1-bench.${subdomain}.localhost:${fnPort}`, port: fnPort, pid: child.pid! },
  };
}

/**
 * The ceiling: one workerd with the function and workerd's d1.js, as a hand-written config would have them: the
 * binding is workerd's own (wrapped over a service binding to the engine, in-process), nothing of Ledge's.
 */
async function startBareWorkerd(work: string): Promise<{ child: ChildProcess; target: Target }> {
  const dir = join(work, 'bare');
  mkdirSync(join(dir, 'data'), { recursive: true });
  const port = await freePort();
  const seedSocket = join(dir, 'seed.sock');
  const props = { json: JSON.stringify({ database: 'bench' }) };
  writeFileSync(
    join(dir, 'config.capnp'),
    serializeConfig({
      services: [
        { name: 'storage', disk: { path: join(dir, 'data'), writable: true } },
        {
          name: 'd1',
          worker: {
            modules: [{ name: 'd1.js', bundled: '/workerd/d1.js' }],
            compatibilityDate: '2025-01-01',
            durableObjectNamespaces: [{ className: 'D1Database', uniqueKey: 'bench', enableSql: true }],
            durableObjectStorage: { localDisk: 'storage' },
            bindings: [{ name: 'DATABASE', durableObjectNamespace: { className: 'D1Database' } }],
          },
        },
        {
          name: 'app',
          worker: {
            modules: [{ name: 'index.js', esModule: readFileSync(WORKER, 'utf8') }],
            compatibilityDate: '2025-01-01',
            bindings: [
              {
                name: 'DB',
                wrapped: {
                  moduleName: 'cloudflare-internal:d1-api',
                  innerBindings: [{ name: 'fetcher', service: { name: 'd1', props } }],
                },
              },
            ],
          },
        },
      ],
      sockets: [
        { name: 'http', address: `127.0.0.1:${port}`, http: {}, service: 'app' },
        { name: 'seed', address: `unix:${seedSocket}`, http: {}, service: { name: 'd1', props } },
      ],
    }),
  );
  const child = spawn(workerdBinary(), ['serve', join(dir, 'config.capnp'), '--experimental'], { stdio: 'ignore' });
  const agent = new Agent({ connect: { socketPath: seedSocket } });
  for (let attempt = 0; ; attempt++) {
    try {
      const answer = await undiciRequest('http://d1/query', {
        method: 'POST',
        body: JSON.stringify([{ sql: SCHEMA }, ...SEED.map((sql) => ({ sql }))]),
        dispatcher: agent,
      });
      await answer.body.text();
      break;
    } catch (error) {
      if (attempt > 100) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await agent.close();
  return { child, target: { name: 'workerd_d1', host: `127.0.0.1:${port}`, port, pid: child.pid! } };
}

async function startMiniflare(work: string): Promise<{ child: ChildProcess; target: Target }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      join(import.meta.dirname, '../miniflare-server.ts'),
      String(port),
      join(work, 'mf'),
      WORKER,
      JSON.stringify({ DB: { type: 'd1', id: 'bench-db' } }),
      join(import.meta.dirname, 'seed.ts'),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise((r) => createInterface({ input: child.stdout! }).once('line', r));
  child.stdout!.resume();
  return { child, target: { name: 'miniflare', host: `127.0.0.1:${port}`, port, pid: child.pid! } };
}

await main();
