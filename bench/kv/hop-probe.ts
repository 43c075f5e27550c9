// Probe: the bare ceiling split in two workerd processes, the function and the KV engine (behind the same shim
// Ledge uses) over a unix socket, with no Ledge wrapper: what the hop costs, and each side's CPU per hot GET.
// Compare with `npm run bench:kv`, which prints each of Ledge's processes. Usage: node bench/kv/hop-probe.ts
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWrk } from '../functions/wrk.ts';
import { freePort, stop, treeCpuMs } from '../functions/processes.ts';
import { serializeConfig } from '../../src/workerd/config/serialize.ts';
import { workerdBinary } from '../../src/workerd/workerd-process.ts';
import { engineShim } from '../../src/workerd/config/engines/shim.ts';
import { callFunction } from '../../test/workers/helpers.ts';

const WORKER = join(import.meta.dirname, 'worker.js');
const work = mkdtempSync(join(tmpdir(), 'ledge-kv-hop-'));
const sock = join(work, 'kv.sock');
const ID = '0123456789abcdef0123456789abcdef';
for (const dir of ['objects', 'blobs']) mkdirSync(join(work, dir), { recursive: true });
const shim = engineShim({ engineModule: 'kv.js', header: 'x-ns', prop: 'namespace', idPattern: /^[0-9a-f]{32}$/ });
writeFileSync(
  join(work, 'engine.capnp'),
  serializeConfig({
    services: [
      {
        name: 'kv',
        worker: {
          modules: [
            { name: 'kv-main.js', esModule: shim },
            { name: 'kv.js', bundled: '/workerd/kv.js' },
          ],
          compatibilityDate: '2025-01-01',
          bindings: [
            { name: 'SHARD', durableObjectNamespace: { className: 'KVNamespace' } },
            { name: 'BLOBS', service: 'blobs' },
          ],
          durableObjectNamespaces: [{ className: 'KVNamespace', uniqueKey: 'bench', enableSql: true }],
          durableObjectStorage: { localDisk: 'objects' },
        },
      },
      { name: 'objects', disk: { path: join(work, 'objects'), writable: true } },
      { name: 'blobs', disk: { path: join(work, 'blobs'), writable: true } },
    ],
    sockets: [{ name: 'kv', address: `unix:${sock}`, http: {}, service: 'kv' }],
  }),
);
const port = await freePort();
writeFileSync(
  join(work, 'fn.capnp'),
  serializeConfig({
    services: [
      {
        name: 'fn',
        worker: {
          modules: [{ name: 'index.js', esModule: readFileSync(WORKER, 'utf8') }],
          compatibilityDate: '2025-01-01',
          bindings: [{ name: 'KV', kvNamespace: 'kvext' }],
        },
      },
      {
        name: 'kvext',
        external: { address: `unix:${sock}`, http: { injectRequestHeaders: [{ name: 'x-ns', value: ID }] } },
      },
    ],
    sockets: [{ name: 'http', address: `127.0.0.1:${port}`, http: {}, service: 'fn' }],
  }),
);
const engine = spawn(workerdBinary(), ['serve', join(work, 'engine.capnp'), '--experimental'], { stdio: 'inherit' });
const fn = spawn(workerdBinary(), ['serve', join(work, 'fn.capnp'), '--experimental'], { stdio: 'inherit' });
try {
  for (let i = 0; i < 300; i++) {
    const ok = await callFunction(port, '127.0.0.1', '/hot', { method: 'PUT', body: 'v'.repeat(1024) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const cpu = () => treeCpuMs(engine.pid!) + treeCpuMs(fn.pid!);
  const e0 = treeCpuMs(engine.pid!);
  const before = cpu();
  const r = await runWrk(`http://127.0.0.1:${port}`, { method: 'GET', path: '/hot', headers: {} }, work, 5);
  console.log(
    `two bare processes: ${r.requestsPerSec} req/s, CPU ${((cpu() - before) / (r.requestsPerSec * 5)).toFixed(2)} ms/req, errors ${r.errors + r.non2xx}, engine ${((treeCpuMs(engine.pid!) - e0) / (r.requestsPerSec * 5)).toFixed(3)} ms/req`,
  );
} finally {
  await stop(fn);
  await stop(engine);
  rmSync(work, { recursive: true, force: true });
}
