// Workers KV through a function, side by side in one run (wrk -t1 -c32, keep-alive): Ledge (the function's
// process -> the account's engines process over a unix socket), the same bundled kv.js in a bare workerd with
// the function in the same process (no Ledge code: the ceiling), and Miniflare (what `wrangler dev` runs).
// A hot GET of one 1 KiB key, and PUTs of 1 KiB values over 1,000 keys (p99 recorded). Besides req/s, the CPU
// each process spent per request (/proc utime + stime over the run, divided by the requests), which hardly moves
// when other work takes the cores of a shared machine, where req/s does.
// Usage: node bench/kv/run.ts [--seconds 10]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { numberArgument } from '../arguments.ts';
import { runWrk, type Scenario, type WrkResult } from '../functions/wrk.ts';
import { freePort, stop } from '../functions/processes.ts';
import { cpuPerRequest, cpuSnapshot, loadAverage } from '../process-cpu.ts';
import { startLedge } from '../../test/helpers/ledge.ts';
import { accountSubdomain, api, callFunction, enableWorkersDev, uploadScript } from '../../test/workers/helpers.ts';
import { serializeConfig } from '../../src/workerd/config/serialize.ts';
import { workerdBinary } from '../../src/workerd/workerd-process.ts';

const seconds = numberArgument('--seconds', 10);
const WORKER = join(import.meta.dirname, 'worker.js');
const VALUE = 'v'.repeat(1024);
const work = mkdtempSync(join(tmpdir(), 'ledge-kv-bench-'));
type Measured = WrkResult & { cpuUs: Record<string, number> };
const results: Record<string, { get: Measured; put: Measured }> = {};

/** One wrk run with the CPU each process of the server's tree (rooted at `root`) spent per request (µs). */
async function run(root: number, url: string, scenario: Scenario): Promise<Measured> {
  const before = cpuSnapshot(root);
  const result = await runWrk(url, scenario, work, seconds);
  return { ...result, cpuUs: cpuPerRequest(before, cpuSnapshot(root), result.requestsPerSec * seconds) };
}

async function measure(name: string, root: number, url: string, headers: Record<string, string>) {
  // The hot key, written once through the function itself (node:http: fetch() would not send this Host).
  const { hostname, port } = new URL(url);
  const host = headers['Host'];
  const written = await callFunction(Number(port), host?.split(':')[0] ?? hostname, '/hot', {
    method: 'PUT',
    body: VALUE,
  });
  if (written.status !== 200) throw new Error(`${name}: the hot key was not written (${written.status})`);
  const get = await run(root, url, { method: 'GET', path: '/hot', headers });
  const put = await run(root, url, { method: 'PUT', path: '/', headers, bodyBytes: 1024, keys: 1000 });
  results[name] = { get, put };
  console.log(name, JSON.stringify(results[name]));
  if (get.non2xx + put.non2xx + get.errors + put.errors > 0)
    throw new Error(`${name}: failed requests, the figures mean nothing`);
}

function waitForLine(child: ReturnType<typeof spawn>, stream: 'stdout' | 'stderr', text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`exited with ${code} before "${text}"`)));
    createInterface({ input: child[stream]! }).on('line', (line) => {
      if (line.includes(text)) resolve();
    });
  });
}

/** Waits until the server answers (any status), for at most 30 s. */
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

console.log(`load average before: ${loadAverage()}`);
try {
  // Ledge.
  const ledge = await startLedge({ flags: { functionsProcesses: 1 } });
  try {
    const created = await api(ledge, 'POST', `/accounts/${ledge.accountId}/storage/kv/namespaces`, { title: 'bench' });
    const upload = await uploadScript(ledge, 'kv-bench', {
      modules: { 'index.js': readFileSync(WORKER, 'utf8') },
      metadata: { bindings: [{ type: 'kv_namespace', name: 'KV', namespace_id: created.body.result.id }] },
    });
    if (upload.status !== 200) throw new Error(JSON.stringify(upload.body.errors));
    await enableWorkersDev(ledge, 'kv-bench');
    const port = ledge.server.platform.functions.runtime.port!;
    // The server runs in this process (its Node CPU counted as MainThread; this script idles while wrk runs)
    // and its workerd processes (the function's, the account's engines) are children.
    await measure('ledge', process.pid, `http://127.0.0.1:${port}`, {
      Host: `kv-bench.${await accountSubdomain(ledge)}.localhost:${port}`,
    });
  } finally {
    await ledge.close();
  }

  // Bare workerd: the function and kv.js in one process, as a hand-written config runs them.
  const barePort = await freePort();
  const data = join(work, 'bare');
  const config = serializeConfig({
    services: [
      {
        name: 'fn',
        worker: {
          modules: [{ name: 'index.js', esModule: readFileSync(WORKER, 'utf8') }],
          compatibilityDate: '2025-01-01',
          bindings: [{ name: 'KV', kvNamespace: { name: 'kv', props: { json: '{"namespace":"bench"}' } } }],
        },
      },
      {
        name: 'kv',
        worker: {
          modules: [{ name: 'kv.js', bundled: '/workerd/kv.js' }],
          compatibilityDate: '2025-01-01',
          bindings: [
            { name: 'SHARD', durableObjectNamespace: { className: 'KVNamespace' } },
            { name: 'BLOBS', service: 'blobs' },
          ],
          durableObjectNamespaces: [{ className: 'KVNamespace', uniqueKey: 'bench', enableSql: true }],
          durableObjectStorage: { localDisk: 'objects' },
        },
      },
      { name: 'objects', disk: { path: join(data, 'objects'), writable: true } },
      { name: 'blobs', disk: { path: join(data, 'blobs'), writable: true } },
    ],
    sockets: [{ name: 'http', address: `127.0.0.1:${barePort}`, http: {}, service: 'fn' }],
  });
  for (const dir of ['objects', 'blobs']) mkdirSync(join(data, dir), { recursive: true });
  writeFileSync(join(work, 'bare.capnp'), config);
  const bare = spawn(workerdBinary(), ['serve', join(work, 'bare.capnp'), '--experimental'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    await listening(`http://127.0.0.1:${barePort}/hot`);
    await measure('bare workerd', bare.pid!, `http://127.0.0.1:${barePort}`, {});
  } finally {
    await stop(bare);
  }

  // Miniflare (wrangler dev).
  const mfPort = await freePort();
  const miniflare = spawn(
    process.execPath,
    [
      join(import.meta.dirname, '../miniflare-server.ts'),
      String(mfPort),
      join(work, 'mf'),
      WORKER,
      JSON.stringify({ KV: { type: 'kv', id: 'bench' } }),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    await waitForLine(miniflare, 'stdout', 'ready');
    await measure('miniflare', miniflare.pid!, `http://127.0.0.1:${mfPort}`, {});
  } finally {
    await stop(miniflare);
  }

  const ceiling = results['bare workerd']!.get.requestsPerSec;
  const ledgeGet = results['ledge']!.get.requestsPerSec;
  const mfGet = results['miniflare']!.get.requestsPerSec;
  console.log(
    `hot GET: Ledge ${ledgeGet.toFixed(0)} req/s = ${((100 * ledgeGet) / ceiling).toFixed(0)}% of bare workerd ` +
      `(${ceiling.toFixed(0)}), ${(ledgeGet / mfGet).toFixed(1)}x Miniflare (${mfGet.toFixed(0)})`,
  );
  const cpu = (name: string) => results[name]!.get.cpuUs.total!;
  console.log(
    `hot GET CPU per request: Ledge ${cpu('ledge')} µs, bare workerd ${cpu('bare workerd')} µs, ` +
      `Miniflare ${cpu('miniflare')} µs (${(cpu('miniflare') / cpu('ledge')).toFixed(2)}x Ledge's)`,
  );
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `${name}: GET p50 ${r.get.p50Ms} ms p99 ${r.get.p99Ms} ms, CPU µs/request ${JSON.stringify(r.get.cpuUs)}; ` +
        `PUT ${r.put.requestsPerSec.toFixed(0)} req/s p99 ${r.put.p99Ms} ms, CPU µs/request ${JSON.stringify(r.put.cpuUs)}`,
    );
  }
  console.log(`load average after: ${loadAverage()}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
