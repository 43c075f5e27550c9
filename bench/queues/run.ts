// A queue's send-to-delivery latency, side by side in one run: Ledge (producer and consumer Workers in their
// process, the account's queue engine in its own, delivery through the gate and the relay), the same bundled
// queues.js in a bare workerd with the Worker in the same process (no Ledge code), and Miniflare (what
// `wrangler dev` runs). Batches of one, so a message is due as soon as it is visible. One message at a time: the
// Worker stamps it on send, its queue() handler records when its delivery started; p50/p99 over the messages.
// Usage: node bench/queues/run.ts [--messages 200]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { numberArgument } from '../arguments.ts';
import { freePort, stop } from '../functions/processes.ts';
import { startLedge } from '../../test/helpers/ledge.ts';
import { accountSubdomain, api, callFunction, enableWorkersDev, uploadScript } from '../../test/workers/helpers.ts';
import { serializeConfig } from '../../src/workerd/config/serialize.ts';
import { workerdBinary } from '../../src/workerd/workerd-process.ts';

const messages = numberArgument('--messages', 200);
const WORKER = readFileSync(join(import.meta.dirname, 'worker.js'), 'utf8');
const work = mkdtempSync(join(tmpdir(), 'ledge-queues-bench-'));
const results: Record<string, { p50: number; p90: number; p99: number; max: number }> = {};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

/** Sends one message at a time and waits for its delivery's record (polled every 2 ms: not part of the figure). */
async function measure(name: string, port: number, host: string) {
  const latencies: number[] = [];
  // A few first messages warm the isolates and the engine up, uncounted.
  for (let i = -10; i < messages; i++) {
    const id = `${name.replace(/\W/g, '')}-${i}`;
    const sent = await callFunction(port, host, `/send?id=${id}`);
    if (sent.text !== 'sent') throw new Error(`${name}: send answered ${sent.status} ${sent.text}`);
    for (let tries = 0; ; tries++) {
      const got = await callFunction(port, host, `/result?id=${id}`);
      if (got.status === 200) {
        if (i >= 0) latencies.push(Number(got.text));
        break;
      }
      if (tries > 15_000) throw new Error(`${name}: message ${id} never delivered`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }
  latencies.sort((a, b) => a - b);
  results[name] = {
    p50: percentile(latencies, 0.5),
    p90: percentile(latencies, 0.9),
    p99: percentile(latencies, 0.99),
    max: latencies.at(-1)!,
  };
  console.log(name, JSON.stringify(results[name]));
}

async function listening(port: number, host: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const up = await callFunction(port, host, '/result?id=none').then(
      () => true,
      () => false,
    );
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`127.0.0.1:${port} never answered`);
}

try {
  // Ledge.
  const ledge = await startLedge({ flags: { functionsProcesses: 1 } });
  try {
    const account = `/accounts/${ledge.accountId}`;
    const kv = await api(ledge, 'POST', `${account}/storage/kv/namespaces`, { title: 'results' });
    await api(ledge, 'POST', `${account}/queues`, { queue_name: 'bench' });
    const upload = await uploadScript(ledge, 'queues-bench', {
      modules: { 'index.js': WORKER },
      metadata: {
        bindings: [
          { type: 'kv_namespace', name: 'RESULTS', namespace_id: kv.body.result.id },
          { type: 'queue', name: 'Q', queue_name: 'bench' },
        ],
      },
    });
    if (upload.status !== 200) throw new Error(JSON.stringify(upload.body.errors));
    await enableWorkersDev(ledge, 'queues-bench');
    const consumer = await api(ledge, 'POST', `${account}/queues/bench/consumers`, {
      type: 'worker',
      script_name: 'queues-bench',
      settings: { batch_size: 1, max_wait_time_ms: 0 },
    });
    if (consumer.status !== 200) throw new Error(JSON.stringify(consumer.body.errors));
    const port = ledge.server.platform.functions.runtime.port!;
    await measure('ledge', port, `queues-bench.${await accountSubdomain(ledge)}.localhost`);
  } finally {
    await ledge.close();
  }

  // Bare workerd: the Worker, queues.js and kv.js in one process, as a hand-written config runs them.
  const barePort = await freePort();
  const data = join(work, 'bare');
  const config = serializeConfig({
    services: [
      {
        name: 'fn',
        worker: {
          modules: [{ name: 'index.js', esModule: WORKER }],
          compatibilityDate: '2025-01-01',
          bindings: [
            { name: 'RESULTS', kvNamespace: { name: 'kv', props: { json: '{"namespace":"results"}' } } },
            { name: 'Q', queue: { name: 'queues', props: { json: '{"queue":"bench"}' } } },
          ],
        },
      },
      {
        name: 'queues',
        worker: {
          modules: [{ name: 'queues.js', bundled: '/workerd/queues.js' }],
          compatibilityDate: '2025-01-01',
          compatibilityFlags: ['service_binding_extra_handlers'],
          bindings: [
            { name: 'SHARD', durableObjectNamespace: { className: 'QueueShard' } },
            {
              name: 'CONSUMERS',
              json: JSON.stringify({ bench: { consumer: 'FN', maxBatchSize: 1, maxBatchTimeout: 0 } }),
            },
            { name: 'FN', service: 'fn' },
          ],
          durableObjectNamespaces: [{ className: 'QueueShard', uniqueKey: 'bench-queues', enableSql: true }],
          durableObjectStorage: { localDisk: 'queue-objects' },
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
      { name: 'queue-objects', disk: { path: join(data, 'queue-objects'), writable: true } },
      { name: 'objects', disk: { path: join(data, 'objects'), writable: true } },
      { name: 'blobs', disk: { path: join(data, 'blobs'), writable: true } },
    ],
    sockets: [{ name: 'http', address: `127.0.0.1:${barePort}`, http: {}, service: 'fn' }],
  });
  for (const dir of ['queue-objects', 'objects', 'blobs']) mkdirSync(join(data, dir), { recursive: true });
  writeFileSync(join(work, 'bare.capnp'), config);
  const bare = spawn(workerdBinary(), ['serve', join(work, 'bare.capnp'), '--experimental'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await listening(barePort, '127.0.0.1');
    await measure('bare workerd', barePort, '127.0.0.1');
  } finally {
    await stop(bare);
  }

  // Miniflare (wrangler dev).
  const mfPort = await freePort();
  const miniflare = spawn(
    process.execPath,
    [
      join(import.meta.dirname, 'miniflare-server.ts'),
      String(mfPort),
      join(work, 'mf'),
      join(import.meta.dirname, 'worker.js'),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    await new Promise<void>((resolve, reject) => {
      miniflare.once('exit', (code) => reject(new Error(`miniflare exited with ${code}`)));
      createInterface({ input: miniflare.stdout! }).on('line', (line) => {
        if (line.includes('ready')) resolve();
      });
    });
    await measure('miniflare', mfPort, '127.0.0.1');
  } finally {
    await stop(miniflare);
  }

  for (const [name, r] of Object.entries(results)) {
    console.log(`${name}: send-to-delivery p50 ${r.p50} ms, p90 ${r.p90} ms, p99 ${r.p99} ms, max ${r.max} ms`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
