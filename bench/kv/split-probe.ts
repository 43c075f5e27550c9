// Probe: Ledge's hot KV GET (5 s of wrk), CPU per request of each of its processes: Node (the server, in this
// process), the function's workerd, the account's engines workerd. Usage: node bench/kv/split-probe.ts
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWrk } from '../functions/wrk.ts';
import { treePids } from '../functions/processes.ts';
import { startLedge } from '../../test/helpers/ledge.ts';
import { accountSubdomain, api, callFunction, enableWorkersDev, uploadScript } from '../../test/workers/helpers.ts';

const WORKER = join(import.meta.dirname, 'worker.js');
const work = mkdtempSync(join(tmpdir(), 'ledge-kv-split-'));
const cpuOf = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const ledge = await startLedge({ flags: { functionsProcesses: 1 } });
try {
  const created = await api(ledge, 'POST', `/accounts/${ledge.accountId}/storage/kv/namespaces`, { title: 'bench' });
  await uploadScript(ledge, 'kv-bench', {
    modules: { 'index.js': readFileSync(WORKER, 'utf8') },
    metadata: { bindings: [{ type: 'kv_namespace', name: 'KV', namespace_id: created.body.result.id }] },
  });
  await enableWorkersDev(ledge, 'kv-bench');
  const port = ledge.server.platform.functions.runtime.port!;
  const host = `kv-bench.${await accountSubdomain(ledge)}.localhost`;
  await callFunction(port, host, '/hot', { method: 'PUT', body: 'v'.repeat(1024) });
  const pids = treePids(process.pid).filter((p) => p !== process.pid);
  const label = (p: number) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').slice(0, 4).join(' ').slice(-80);
    } catch {
      return '?';
    }
  };
  const before = new Map(pids.map((p) => [p, cpuOf(p)]));
  const nodeBefore = process.cpuUsage();
  const r = await runWrk(
    `http://127.0.0.1:${port}`,
    { method: 'GET', path: '/hot', headers: { Host: `${host}:${port}` } },
    work,
    5,
  );
  const n = r.requestsPerSec * 5;
  console.log(`ledge ${r.requestsPerSec} req/s errors ${r.errors + r.non2xx}`);
  const node = process.cpuUsage(nodeBefore);
  console.log(`node ${((node.user + node.system) / 1000 / n).toFixed(3)} ms/req`);
  for (const p of pids) {
    try {
      const d = (cpuOf(p) - before.get(p)!) / n;
      if (d > 0.001) console.log(`${p} ${d.toFixed(3)} ms/req ${label(p)}`);
    } catch {
      // the process ended meanwhile
    }
  }
} finally {
  await ledge.close();
}
