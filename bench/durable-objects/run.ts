// A Durable Object round trip through a function, side by side in one run (wrk -t1 -c32, keep-alive): each
// request increments one counter object (SQLite-backed) over RPC. Ledge (the front process forwards to the
// Worker's own process, which hosts the object, storage on the account's disk), the same code in a bare
// workerd (no Ledge code: the ceiling), and Miniflare (what `wrangler dev` runs).
// Besides req/s, the CPU each process spent per request (/proc utime + stime over the run, divided by the requests):
// it hardly moves when other work takes the cores of a shared machine, where req/s does.
// Usage: node bench/durable-objects/run.ts [--seconds 10] [--only ledge,bare,miniflare]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { listArgument, numberArgument } from '../arguments.ts';
import { runWrk, type WrkResult } from '../functions/wrk.ts';
import { freePort, stop } from '../functions/processes.ts';
import { cpuPerRequest, cpuSnapshot, loadAverage as load } from '../process-cpu.ts';
import { startLedge } from '../../test/helpers/ledge.ts';
import { accountSubdomain, callFunction, enableWorkersDev, uploadScript } from '../../test/workers/helpers.ts';
import { serializeConfig } from '../../src/workerd/config/serialize.ts';
import { workerdBinary } from '../../src/workerd/workerd-process.ts';

const seconds = numberArgument('--seconds', 10);
/** `--only ledge,bare,miniflare`: some of the three (the comparison lines need all three). */
const only = new Set(listArgument('--only') ?? ['ledge', 'bare', 'miniflare']);
const WORKER = join(import.meta.dirname, 'worker.js');
const work = mkdtempSync(join(tmpdir(), 'ledge-do-bench-'));
type Measured = WrkResult & { cpuUs: Record<string, number> };
const results: Record<string, Measured & { count: number; peek: Measured }> = {};

/** One wrk run with the CPU each process of the server's tree spent per request (µs). */
async function run(root: number, url: string, path: string, host: string | undefined): Promise<Measured> {
  const before = cpuSnapshot(root);
  const result = await runWrk(url, { method: 'GET', path, headers: host ? { Host: host } : {} }, work, seconds);
  return { ...result, cpuUs: cpuPerRequest(before, cpuSnapshot(root), result.requestsPerSec * seconds) };
}

async function measure(name: string, root: number, url: string, host: string | undefined) {
  const { hostname, port } = new URL(url);
  const count = async () => {
    const answer = await callFunction(Number(port), host ?? hostname, '/');
    if (answer.status !== 200) throw new Error(`${name}: ${answer.status} ${answer.text}`);
    return Number(answer.text);
  };
  const before = await count();
  const result = await run(root, url, '/', host);
  // Every counted request incremented the counter exactly once (and the object kept it).
  const after = await count();
  const peek = await run(root, url, '/peek', host);
  if (peek.non2xx + peek.errors > 0) throw new Error(`${name}: failed reads, the figures mean nothing`);
  results[name] = { ...result, count: after - before - 1, peek };
  console.log(name, JSON.stringify(results[name]));
  if (result.non2xx + result.errors > 0) throw new Error(`${name}: failed requests, the figures mean nothing`);
}

function waitForLine(child: ReturnType<typeof spawn>, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`exited with ${code} before "${text}"`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes(text)) resolve();
    });
  });
}

async function listening(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (
      await fetch(url).then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} never answered`);
}

console.log(`load average before: ${load()}`);
try {
  if (only.has('ledge')) await measureLedge();
  if (only.has('bare')) await measureBare();
  if (only.has('miniflare')) await measureMiniflare();
  if (only.size === 3) compare();
  report();
  console.log(`load average after: ${load()}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** Ledge, deployed with its first migration as wrangler would. */
async function measureLedge() {
  const ledge = await startLedge({ flags: { functionsProcesses: 1 } });
  try {
    const upload = await uploadScript(ledge, 'do-bench', {
      modules: { 'index.js': readFileSync(WORKER, 'utf8') },
      metadata: {
        compatibility_date: '2025-04-01',
        bindings: [{ type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Counter' }],
        migrations: { new_tag: 'v1', steps: [{ new_sqlite_classes: ['Counter'] }] },
      },
    });
    if (upload.status !== 200) throw new Error(JSON.stringify(upload.body.errors));
    await enableWorkersDev(ledge, 'do-bench');
    const port = ledge.server.platform.functions.runtime.port!;
    await measure(
      'ledge',
      process.pid,
      `http://127.0.0.1:${port}`,
      `do-bench.${await accountSubdomain(ledge)}.localhost`,
    );
  } finally {
    await ledge.close();
  }
}

/** Bare workerd: the same module and class in one process, storage on a local disk. */
async function measureBare() {
  const barePort = await freePort();
  const objects = join(work, 'bare-objects');
  mkdirSync(objects, { recursive: true });
  writeFileSync(
    join(work, 'bare.capnp'),
    serializeConfig({
      services: [
        {
          name: 'fn',
          worker: {
            modules: [{ name: 'index.js', esModule: readFileSync(WORKER, 'utf8') }],
            compatibilityDate: '2025-04-01',
            bindings: [{ name: 'COUNTER', durableObjectNamespace: { className: 'Counter' } }],
            durableObjectNamespaces: [{ className: 'Counter', uniqueKey: 'bench', enableSql: true }],
            durableObjectStorage: { localDisk: 'objects' },
          },
        },
        { name: 'objects', disk: { path: objects, writable: true } },
      ],
      sockets: [{ name: 'http', address: `127.0.0.1:${barePort}`, http: {}, service: 'fn' }],
    }),
  );
  const bare = spawn(workerdBinary(), ['serve', join(work, 'bare.capnp')], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    await listening(`http://127.0.0.1:${barePort}/`);
    await measure('bare workerd', bare.pid!, `http://127.0.0.1:${barePort}`, undefined);
  } finally {
    await stop(bare);
  }
}

/** Miniflare (wrangler dev). */
async function measureMiniflare() {
  const mfPort = await freePort();
  const miniflare = spawn(
    process.execPath,
    [join(import.meta.dirname, 'miniflare-server.ts'), String(mfPort), join(work, 'mf'), WORKER],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    await waitForLine(miniflare, 'ready');
    await measure('miniflare', miniflare.pid!, `http://127.0.0.1:${mfPort}`, undefined);
  } finally {
    await stop(miniflare);
  }
}

function compare() {
  const ceiling = results['bare workerd']!.requestsPerSec;
  const ledgeRps = results['ledge']!.requestsPerSec;
  const mfRps = results['miniflare']!.requestsPerSec;
  console.log(
    `counter increment: Ledge ${ledgeRps.toFixed(0)} req/s = ${((100 * ledgeRps) / ceiling).toFixed(0)}% of bare ` +
      `workerd (${ceiling.toFixed(0)}), ${(ledgeRps / mfRps).toFixed(1)}x Miniflare (${mfRps.toFixed(0)})`,
  );
  const peekCeiling = results['bare workerd']!.peek.requestsPerSec;
  const ledgePeek = results['ledge']!.peek.requestsPerSec;
  console.log(
    `read (no write): Ledge ${ledgePeek.toFixed(0)} req/s = ${((100 * ledgePeek) / peekCeiling).toFixed(0)}% of bare ` +
      `workerd (${peekCeiling.toFixed(0)}), ${(ledgePeek / results['miniflare']!.peek.requestsPerSec).toFixed(1)}x Miniflare`,
  );
  // CPU per request, bare workerd's over Ledge's: the share of bare workerd's req/s Ledge would reach on cores
  // of its own (both CPU-bound).
  const cpu = (name: string, read: boolean) => (read ? results[name]!.peek : results[name]!).cpuUs.total!;
  for (const read of [false, true])
    console.log(
      `${read ? 'read' : 'increment'} CPU per request: Ledge ${cpu('ledge', read)} µs, bare workerd ` +
        `${cpu('bare workerd', read)} µs (${((100 * cpu('bare workerd', read)) / cpu('ledge', read)).toFixed(0)}%), ` +
        `Miniflare ${cpu('miniflare', read)} µs`,
    );
}

function report() {
  for (const [name, r] of Object.entries(results))
    console.log(
      `${name}: increment p50 ${r.p50Ms} ms p99 ${r.p99Ms} ms (counted ${r.count}), CPU µs/request ${JSON.stringify(r.cpuUs)}; ` +
        `read ${r.peek.requestsPerSec.toFixed(0)} req/s p50 ${r.peek.p50Ms} ms p99 ${r.peek.p99Ms} ms, CPU µs/request ${JSON.stringify(r.peek.cpuUs)}`,
    );
}
