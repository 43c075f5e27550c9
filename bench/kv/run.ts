// Workers KV through a function, side by side in one run (wrk -t1 -c32, keep-alive): Ledge (the function's
// process -> the account's engines process over a unix socket), the same bundled kv.js in a bare workerd with
// the function in the same process (no Ledge code: the ceiling), and Miniflare (what `wrangler dev` runs).
// A hot GET of one 1 KiB key, and PUTs of 1 KiB values over 1,000 keys (p99 recorded).
// Usage: node bench/kv/run.ts [--seconds 10]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { numberArgument } from '../arguments.ts';
import { runWrk, type Scenario, type WrkResult } from '../functions/wrk.ts';
import { freePort, stop, treeCpuMs, workerdCpuMs } from '../functions/processes.ts';
import { startLedge } from '../../test/helpers/ledge.ts';
import { accountSubdomain, api, callFunction, enableWorkersDev, uploadScript } from '../../test/workers/helpers.ts';
import { serializeConfig } from '../../src/workerd/config/serialize.ts';
import { workerdBinary } from '../../src/workerd/workerd-process.ts';

const seconds = numberArgument('--seconds', 10);
const WORKER = join(import.meta.dirname, 'worker.js');
const VALUE = 'v'.repeat(1024);
const work = mkdtempSync(join(tmpdir(), 'ledge-kv-bench-'));
const results: Record<string, { get: WrkResult; put: WrkResult; getCpuMsPerReq: number }> = {};

/**
 * `cpuMs` reads the CPU a platform's processes spent so far: unlike req/s it hardly moves when other work on a
 * shared machine takes cores away, and it says what a 3x-Miniflare target asks of each request.
 */
async function measure(name: string, url: string, headers: Record<string, string>, cpuMs: () => number) {
  // The hot key, written once through the function itself (node:http: fetch() would not send this Host).
  const { hostname, port } = new URL(url);
  const host = headers['Host'];
  const written = await callFunction(Number(port), host?.split(':')[0] ?? hostname, '/hot', {
    method: 'PUT',
    body: VALUE,
  });
  if (written.status !== 200) throw new Error(`${name}: the hot key was not written (${written.status})`);
  const get: Scenario = { method: 'GET', path: '/hot', headers };
  const put: Scenario = { method: 'PUT', path: '/', headers, bodyBytes: 1024, keys: 1000 };
  const before = cpuMs();
  const getResult = await runWrk(url, get, work, seconds);
  const getCpuMsPerReq = (cpuMs() - before) / (getResult.requestsPerSec * seconds);
  results[name] = { get: getResult, put: await runWrk(url, put, work, seconds), getCpuMsPerReq };
  console.log(name, JSON.stringify(results[name]));
  const { get: g, put: p } = results[name];
  if (g.non2xx + p.non2xx + g.errors + p.errors > 0)
    throw new Error(`${name}: failed requests, the figures mean nothing`);
}

function cpuUsageMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
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
    // The server runs in this process (its Node CPU counted here; this script idles while wrk runs) and its
    // workerd processes (the function's, the account's engines) are children.
    const ledgeCpu = () => workerdCpuMs(process.pid) + cpuUsageMs();
    await measure(
      'ledge',
      `http://127.0.0.1:${port}`,
      { Host: `kv-bench.${await accountSubdomain(ledge)}.localhost:${port}` },
      ledgeCpu,
    );
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
    await measure('bare workerd', `http://127.0.0.1:${barePort}`, {}, () => treeCpuMs(bare.pid!));
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
    await measure('miniflare', `http://127.0.0.1:${mfPort}`, {}, () => treeCpuMs(miniflare.pid!));
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
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `${name}: GET p50 ${r.get.p50Ms} ms p99 ${r.get.p99Ms} ms, CPU ${r.getCpuMsPerReq.toFixed(2)} ms/req; PUT ${r.put.requestsPerSec.toFixed(0)} req/s p99 ${r.put.p99Ms} ms`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
