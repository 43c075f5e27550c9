// Benchmark: a Worker reached through a Workers route on the traffic port against the same Worker on the
// functions port (its workers.dev host), in one run: GET 1 KiB answered from memory by the script, each
// scenario alternating for --rounds rounds (medians reported), each a `wrk -t1 -c32 -d<seconds>s`. The route's
// extra hop is the traffic port's raw proxy (the load balancers' data plane) relaying to the functions port.
// Also reports the ledge server's CPU per request (its process alone: the proxy; workerd runs in children).
// Needs wrk. Usage: node bench/functions/routes.bench.ts [--seconds 10 --rounds 3 --warm-up 3]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuUsage } from 'node:process';
import { BENCH_ACCOUNT, startBenchLedge } from '../load-balancing/common.ts';
import { HELLO_MODULE } from './hello-world.ts';
import { runWrk, type WrkResult } from './wrk.ts';

const argument = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const SECONDS = argument('--seconds', 10);
const ROUNDS = argument('--rounds', 3);
const WARM_UP = argument('--warm-up', 3);
const SCRIPT = 'bench-site';
const ROUTE_HOST = 'www.bench.test';

async function main() {
  const ledge = await startBenchLedge();
  const work = mkdtempSync(join(tmpdir(), 'ledge-routes-bench-'));
  try {
    const api = async (method: string, path: string, body?: unknown | FormData) => {
      const form = body instanceof FormData;
      const response = await fetch(`${ledge.server.apiUrl}${path}`, {
        method,
        headers: form ? { authorization: ledge.headers['authorization']! } : ledge.headers,
        body: body === undefined ? undefined : form ? body : JSON.stringify(body),
      });
      const parsed = (await response.json()) as { success: boolean; result: Record<string, unknown>; errors: unknown };
      if (!parsed.success) throw new Error(`${method} ${path}: ${JSON.stringify(parsed.errors)}`);
      return parsed.result;
    };
    const a = `/accounts/${BENCH_ACCOUNT}`;
    const zone = await api('POST', '/zones', { name: 'bench.test', account: { id: BENCH_ACCOUNT } });
    const form = new FormData();
    form.set('metadata', JSON.stringify({ main_module: 'index.js', bindings: [], compatibility_date: '2025-01-01' }));
    form.set('index.js', new File([HELLO_MODULE], 'index.js', { type: 'application/javascript+module' }));
    await api('PUT', `${a}/workers/scripts/${SCRIPT}`, form);
    await api('POST', `${a}/workers/scripts/${SCRIPT}/subdomain`, { enabled: true });
    await api('POST', `/zones/${String(zone['id'])}/workers/routes`, { pattern: `${ROUTE_HOST}/*`, script: SCRIPT });
    const subdomain = String((await api('GET', `${a}/workers/subdomain`))['subdomain']);
    const platform = ledge.server.platform;
    const targets = {
      'functions port (workers.dev host)': {
        url: `http://127.0.0.1:${platform.functions.runtime.port!}`,
        host: `${SCRIPT}.${subdomain}.localhost`,
      },
      'traffic port (Workers route)': { url: `http://127.0.0.1:${platform.traffic.port!}`, host: ROUTE_HOST },
    };
    const run = async (target: { url: string; host: string }, seconds: number) => {
      const before = cpuUsage();
      const result = await runWrk(
        target.url,
        { method: 'GET', path: '/', headers: { Host: target.host } },
        work,
        seconds,
      );
      const cpu = cpuUsage(before);
      const requests = result.requestsPerSec * seconds;
      return { ...result, serverCpuUsPerRequest: (cpu.user + cpu.system) / Math.max(1, requests) };
    };
    if (WARM_UP > 0) for (const target of Object.values(targets)) await run(target, WARM_UP);
    const results = new Map<string, (WrkResult & { serverCpuUsPerRequest: number })[]>();
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? Object.entries(targets) : Object.entries(targets).reverse();
      for (const [name, target] of order) {
        const result = await run(target, SECONDS);
        if (result.errors > 0 || result.non2xx > 0) throw new Error(`${name}: ${JSON.stringify(result)}`);
        results.set(name, [...(results.get(name) ?? []), result]);
      }
    }
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
    console.log(`GET 1 KiB from a Worker, wrk -t1 -c32 -d${SECONDS}s, ${ROUNDS} rounds (medians), ${ledge.backend}`);
    const rows = [...results].map(([name, list]) => ({
      name,
      rps: median(list.map((r) => r.requestsPerSec)),
      p50: median(list.map((r) => r.p50Ms)),
      p99: median(list.map((r) => r.p99Ms)),
      cpu: median(list.map((r) => r.serverCpuUsPerRequest)),
    }));
    for (const row of rows)
      console.log(
        `  ${row.name.padEnd(36)} ${row.rps.toFixed(0).padStart(7)} req/s  p50 ${row.p50.toFixed(2)} ms  p99 ${row.p99.toFixed(2)} ms  node CPU ${row.cpu.toFixed(1)} us/req`,
      );
    const [direct, routed] = rows;
    console.log(
      `  route / direct: ${((routed!.rps / direct!.rps) * 100).toFixed(0)}% of req/s, p99 ${(routed!.p99 / direct!.p99).toFixed(2)}x`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
    await ledge.close();
  }
}

await main();
