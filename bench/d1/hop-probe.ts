// Probe: the D1 ceiling split in two workerd processes, the function (workerd's own d1 binding) and the engine
// (d1.js behind the same shim Ledge uses) over a unix socket, with no Ledge wrapper: what the hop costs a point
// select, and each side's CPU per request. Compare with `node bench/d1/run.ts`, which prints Ledge's processes.
// Usage: node bench/d1/hop-probe.ts [--seconds 5]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { numberArgument } from '../arguments.ts';
import { runWrk } from '../functions/wrk.ts';
import { freePort, stop } from '../functions/processes.ts';
import { cpuPerRequest, cpuSnapshot, loadAverage } from '../process-cpu.ts';
import { serializeConfig } from '../../src/workerd/config/serialize.ts';
import { workerdBinary } from '../../src/workerd/workerd-process.ts';
import { engineShim } from '../../src/workerd/config/engines/shim.ts';
import { SCHEMA, SEED } from './seed.ts';

const seconds = numberArgument('--seconds', 5);
const work = mkdtempSync(join(tmpdir(), 'ledge-d1-hop-'));
const sock = join(work, 'd1.sock');
const HEADER = 'x-db';
const ID = '01234567-89ab-cdef-0123-456789abcdef';
mkdirSync(join(work, 'storage'));
const shim = engineShim({
  engineModule: 'd1.js',
  header: HEADER,
  prop: 'database',
  idPattern: /^[0-9a-f-]{36}$/,
  namespaceBinding: 'DATABASE',
});
writeFileSync(
  join(work, 'engine.capnp'),
  serializeConfig({
    services: [
      {
        name: 'd1',
        worker: {
          modules: [
            { name: 'd1-main.js', esModule: shim },
            { name: 'd1.js', bundled: '/workerd/d1.js' },
          ],
          compatibilityDate: '2025-01-01',
          bindings: [{ name: 'DATABASE', durableObjectNamespace: { className: 'D1Database' } }],
          durableObjectNamespaces: [{ className: 'D1Database', uniqueKey: 'bench', enableSql: true }],
          durableObjectStorage: { localDisk: 'storage' },
        },
      },
      { name: 'storage', disk: { path: join(work, 'storage'), writable: true } },
    ],
    sockets: [{ name: 'd1', address: `unix:${sock}`, http: {}, service: 'd1' }],
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
          modules: [{ name: 'index.js', esModule: readFileSync(join(import.meta.dirname, 'worker.js'), 'utf8') }],
          compatibilityDate: '2025-01-01',
          bindings: [
            {
              name: 'DB',
              wrapped: {
                moduleName: 'cloudflare-internal:d1-api',
                innerBindings: [{ name: 'fetcher', service: 'd1ext' }],
              },
            },
          ],
        },
      },
      {
        name: 'd1ext',
        external: { address: `unix:${sock}`, http: { injectRequestHeaders: [{ name: HEADER, value: ID }] } },
      },
    ],
    sockets: [{ name: 'http', address: `127.0.0.1:${port}`, http: {}, service: 'fn' }],
  }),
);
const engine = spawn(workerdBinary(), ['serve', join(work, 'engine.capnp'), '--experimental'], { stdio: 'inherit' });
const fn = spawn(workerdBinary(), ['serve', join(work, 'fn.capnp'), '--experimental'], { stdio: 'inherit' });
const agent = new Agent({ connect: { socketPath: sock } });
try {
  for (let attempt = 0; ; attempt++) {
    try {
      const answer = await request('http://d1/query', {
        method: 'POST',
        headers: { [HEADER]: ID },
        body: JSON.stringify([{ sql: SCHEMA }, ...SEED.map((sql) => ({ sql }))]),
        dispatcher: agent,
      });
      await answer.body.text();
      if (answer.statusCode !== 200) throw new Error(`seeding answered ${answer.statusCode}`);
      break;
    } catch (error) {
      if (attempt > 100) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  console.log(`load average before: ${loadAverage()}`);
  const cpu = () => new Map([...cpuSnapshot(engine.pid!), ...cpuSnapshot(fn.pid!)].map(([pid, s]) => [pid, s]));
  const labels = (snapshot: ReturnType<typeof cpu>) => {
    for (const [pid, s] of snapshot) s.label = pid === engine.pid ? 'engine' : 'function';
    return snapshot;
  };
  const before = labels(cpu());
  const r = await runWrk(`http://127.0.0.1:${port}`, { method: 'GET', path: '/?id=5', headers: {} }, work, seconds);
  const perRequest = cpuPerRequest(before, labels(cpu()), r.requestsPerSec * seconds);
  console.log(
    `two bare processes: ${r.requestsPerSec.toFixed(0)} req/s, p99 ${r.p99Ms} ms, errors ${r.errors + r.non2xx}, ` +
      `CPU µs/request ${JSON.stringify(perRequest)}`,
  );
  console.log(`load average after: ${loadAverage()}`);
} finally {
  await agent.close();
  await stop(fn);
  await stop(engine);
  rmSync(work, { recursive: true, force: true });
}
