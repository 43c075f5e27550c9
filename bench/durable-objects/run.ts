// A Durable Object round trip through a function, side by side in one run (wrk -t1 -c32, keep-alive): each
// request increments one counter object (SQLite-backed) over RPC. Ledge (the server's only Worker, so its one
// process serves the functions port itself and hosts the object, storage on the account's disk), the same code in a bare
// workerd (no Ledge code: the ceiling), and Miniflare (what `wrangler dev` runs).
// Besides req/s, the CPU each process spent per request (/proc utime + stime over the run, divided by the requests):
// it hardly moves when other work takes the cores of a shared machine, where req/s does.
// Usage: node bench/durable-objects/run.ts [--seconds 10] [--rounds 3] [--only ledge,bare,miniflare]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { listArgument, numberArgument } from '../arguments.ts';
import { runWrk, type WrkResult } from '../functions/wrk.ts';
import { freePort, stop, treePids } from '../functions/processes.ts';
import { cpuPerRequest, cpuSnapshot, loadAverage as load, type CpuSnapshot } from '../process-cpu.ts';
import { startLedge } from '../../test/helpers/ledge.ts';
import { accountSubdomain, callFunction, enableWorkersDev, uploadScript } from '../../test/workers/helpers.ts';
import { serializeConfig } from '../../src/workerd/config/serialize.ts';
import { workerdBinary } from '../../src/workerd/workerd-process.ts';

const seconds = numberArgument('--seconds', 10);
/** Rounds of all three, each round in another order: an increment waits for its commit, so one disk-bound run says little. */
const rounds = numberArgument('--rounds', 3);
/** `--only ledge,bare,miniflare`: some of the three (the comparison lines need all three). */
const only = new Set(listArgument('--only') ?? ['ledge', 'bare', 'miniflare']);
const WORKER = join(import.meta.dirname, 'worker.js');
const work = mkdtempSync(join(tmpdir(), 'ledge-do-bench-'));
type Measured = WrkResult & { cpuUs: Record<string, number> };
interface Round extends Measured {
  count: number;
  peek: Measured;
}
/** What wrk targets: a base URL, the Host to send, and the pid whose process tree's CPU counts. */
interface Target {
  name: string;
  root: number;
  url: string;
  host: string | undefined;
  close: () => Promise<void>;
}
const results: Record<string, Round[]> = {};

/** One wrk run with the CPU each process of the server's tree spent per request (µs). */
async function run(target: Target, path: string): Promise<Measured> {
  const before = snapshotOf(target);
  const headers: Record<string, string> = target.host ? { Host: target.host } : {};
  const result = await runWrk(target.url, { method: 'GET', path, headers }, work, seconds);
  return { ...result, cpuUs: cpuPerRequest(before, snapshotOf(target), result.requestsPerSec * seconds) };
}

/** The target's process tree; Ledge runs in this process, whose tree also holds the other targets (left out). */
function snapshotOf(target: Target): CpuSnapshot {
  const snapshot = cpuSnapshot(target.root);
  for (const other of targets) {
    const theirs = treePids(other.root);
    if (other !== target && !theirs.includes(target.root)) for (const pid of theirs) snapshot.delete(pid);
  }
  return snapshot;
}

async function measure(target: Target): Promise<void> {
  const { hostname, port } = new URL(target.url);
  const count = async () => {
    const answer = await callFunction(Number(port), target.host ?? hostname, '/');
    if (answer.status !== 200) throw new Error(`${target.name}: ${answer.status} ${answer.text}`);
    return Number(answer.text);
  };
  const before = await count();
  const result = await run(target, '/');
  // Every counted request incremented the counter exactly once (and the object kept it).
  const after = await count();
  const peek = await run(target, '/peek');
  if (peek.non2xx + peek.errors > 0) throw new Error(`${target.name}: failed reads, the figures mean nothing`);
  const round = { ...result, count: after - before - 1, peek };
  (results[target.name] ??= []).push(round);
  console.log(target.name, JSON.stringify(round));
  if (result.non2xx + result.errors > 0) throw new Error(`${target.name}: failed requests, the figures mean nothing`);
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
const targets: Target[] = [];
try {
  if (only.has('ledge')) targets.push(await startLedgeTarget());
  if (only.has('bare')) targets.push(await startBare());
  if (only.has('miniflare')) targets.push(await startMiniflare());
  for (let round = 0; round < rounds; round++) {
    // Each round starts with another target, so none is always measured first (or last) on a warming disk.
    for (let i = 0; i < targets.length; i++) await measure(targets[(round + i) % targets.length]!);
  }
  if (only.size === 3) compare();
  report();
  console.log(`load average after: ${load()}`);
} finally {
  for (const target of targets.reverse()) await target.close().catch((error) => console.error(error));
  rmSync(work, { recursive: true, force: true });
}

/** Ledge, deployed with its first migration as wrangler would. */
async function startLedgeTarget(): Promise<Target> {
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
    const host = `do-bench.${await accountSubdomain(ledge)}.localhost`;
    return { name: 'ledge', root: process.pid, url: `http://127.0.0.1:${port}`, host, close: () => ledge.close() };
  } catch (error) {
    await ledge.close();
    throw error;
  }
}

/** Bare workerd: the same module and class in one process, storage on a local disk. */
async function startBare(): Promise<Target> {
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
  const target = {
    name: 'bare workerd',
    root: bare.pid!,
    url: `http://127.0.0.1:${barePort}`,
    host: undefined,
    close: () => stop(bare),
  };
  return whenReady(target, listening(`${target.url}/`));
}

/** Miniflare (wrangler dev). */
async function startMiniflare(): Promise<Target> {
  const mfPort = await freePort();
  const miniflare = spawn(
    process.execPath,
    [join(import.meta.dirname, 'miniflare-server.ts'), String(mfPort), join(work, 'mf'), WORKER],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const target = {
    name: 'miniflare',
    root: miniflare.pid!,
    url: `http://127.0.0.1:${mfPort}`,
    host: undefined,
    close: () => stop(miniflare),
  };
  return whenReady(target, waitForLine(miniflare, 'ready'));
}

/** The target once `ready` settles; stopped if it never gets there. */
async function whenReady(target: Target, ready: Promise<void>): Promise<Target> {
  try {
    await ready;
    return target;
  } catch (error) {
    await target.close();
    throw error;
  }
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}
function percent(part: number, whole: number): string {
  return `${((100 * part) / whole).toFixed(0)}%`;
}

/** Ledge against bare workerd and Miniflare: per round (same minutes), then the medians of those ratios. */
function compare() {
  const [ledge, bare, mf] = [results['ledge']!, results['bare workerd']!, results['miniflare']!];
  for (const read of [false, true]) {
    const rps = (r: Round) => (read ? r.peek : r).requestsPerSec;
    const cpu = (r: Round) => (read ? r.peek : r).cpuUs.total!;
    const ratios = ledge.map((r, i) => rps(r) / rps(bare[i]!));
    const cpuRatios = ledge.map((r, i) => cpu(bare[i]!) / cpu(r));
    console.log(
      `${read ? 'read (no write)' : 'counter increment'}: Ledge / bare workerd req/s per round ` +
        `${ratios.map((x) => percent(x, 1)).join(', ')}, median **${percent(median(ratios), 1)}**; ` +
        `medians Ledge ${median(ledge.map(rps)).toFixed(0)}, bare ${median(bare.map(rps)).toFixed(0)}, ` +
        `Miniflare ${median(mf.map(rps)).toFixed(0)} req/s (Ledge ${(median(ledge.map(rps)) / median(mf.map(rps))).toFixed(1)}x)`,
    );
    // Bare workerd's CPU per request over Ledge's: the share of bare's req/s Ledge would reach on cores of its own.
    console.log(
      `${read ? 'read' : 'increment'} CPU per request (medians): Ledge ${median(ledge.map(cpu))} µs, bare workerd ` +
        `${median(bare.map(cpu))} µs (bare / Ledge per round: ${cpuRatios.map((x) => percent(x, 1)).join(', ')}), ` +
        `Miniflare ${median(mf.map(cpu))} µs`,
    );
  }
}

function report() {
  for (const [name, rounds] of Object.entries(results))
    for (const r of rounds)
      console.log(
        `${name}: increment ${r.requestsPerSec.toFixed(0)} req/s p50 ${r.p50Ms} ms p99 ${r.p99Ms} ms (counted ${r.count}), CPU µs/request ${JSON.stringify(r.cpuUs)}; ` +
          `read ${r.peek.requestsPerSec.toFixed(0)} req/s p50 ${r.peek.p50Ms} ms p99 ${r.peek.p99Ms} ms, CPU µs/request ${JSON.stringify(r.peek.cpuUs)}`,
      );
}
