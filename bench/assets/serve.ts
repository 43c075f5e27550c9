// Benchmark: GET of a 1 KiB and a 1 MiB static asset, side by side in one run, from three servers of the
// same directory: a site deployed to Ledge with the real wrangler (assets-only, workers.dev host), workerd's
// own `assets` service in a bare config with no Ledge code (the ceiling), and `wrangler dev` (Miniflare).
// wrk -t1 -c32 keep-alive as in bench/functions; each scenario runs ROUNDS rounds, the three servers in a
// rotating order, ratios taken within a round and their median reported.
// `--base <checkout>` adds a Ledge built from another commit (its own node_modules) as `ledge_base`: two builds
// compared in the same rounds.
// Usage: npm run bench:assets:serve [-- --seconds 10 --rounds 3 --base /tmp/ledge-base]
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { workerdBinary } from '../../src/workerd/workerd-process.ts';
import { numberArgument } from '../arguments.ts';
import { freePort, stop, treeCpuMs } from '../functions/processes.ts';
import { runWrk, type WrkResult } from '../functions/wrk.ts';
import { benchWorkDir, getWithHost, startBenchLedge, WRANGLER, wranglerEnv } from './ledge.ts';

const SECONDS = numberArgument('--seconds', 10);
const ROUNDS = numberArgument('--rounds', 3);
const BASE = process.argv.includes('--base') ? process.argv[process.argv.indexOf('--base') + 1] : undefined;
const KiB = 1024;
const MiB = 1024 * 1024;
const SIZES = { get_1k: KiB, get_1m: MiB } as const;
type ScenarioName = keyof typeof SIZES;
const PATHS: Record<ScenarioName, string> = { get_1k: '/asset-1k.txt', get_1m: '/asset-1m.txt' };

interface Target {
  name: 'ledge' | 'ledge_base' | 'workerd_assets' | 'workerd_assets_hop' | 'wrangler_dev';
  port: number;
  host: string;
  /** The process whose tree serves it (CPU per request). */
  pid: number;
}

/** The site: the two assets (printable text, so every server gives them the same content type) and a home page. */
function writeSite(root: string): void {
  mkdirSync(join(root, 'public'), { recursive: true });
  writeFileSync(join(root, 'public/index.html'), '<!doctype html><title>bench</title><h1>bench</h1>');
  for (const [name, size] of Object.entries(SIZES))
    writeFileSync(
      join(root, `public${PATHS[name as ScenarioName]}`),
      randomBytes(size).toString('base64').slice(0, size),
    );
  writeFileSync(
    join(root, 'wrangler.jsonc'),
    JSON.stringify({ name: 'assets-serve', compatibility_date: '2025-06-01', assets: { directory: './public' } }),
  );
}

/**
 * workerd's `assets` service serving the directory by itself: the same service Ledge configures, nothing around
 * it (the ceiling), on one socket; on a second socket the same service behind a one-line worker that forwards
 * each request to it, as any Host routing in an isolate must (what the ceiling would be with one such hop).
 */
async function startWorkerdAssets(
  work: string,
  directory: string,
): Promise<{ child: ChildProcess; port: number; hopPort: number }> {
  const [port, hopPort] = [await freePort(), await freePort()];
  const config = join(work, 'workerd-assets.capnp');
  writeFileSync(join(work, 'hop.js'), 'export default { fetch(request, env) { return env.SITE.fetch(request); } };\n');
  writeFileSync(
    config,
    `using Workerd = import "/workerd/workerd.capnp";\nconst config :Workerd.Config = (\n  services = [\n` +
      `    (name = "site", assets = (path = ${JSON.stringify(directory)}, config = "{}", compatibilityDate = "2025-06-01")),\n` +
      `    (name = "hop", worker = (modules = [(name = "hop.js", esModule = embed "hop.js")], compatibilityDate = "2025-06-01", ` +
      `bindings = [(name = "SITE", service = "site")])),\n  ],\n  sockets = [\n` +
      `    (name = "http", address = "127.0.0.1:${port}", http = (), service = "site"),\n` +
      `    (name = "hop", address = "127.0.0.1:${hopPort}", http = (), service = "hop"),\n  ],\n);\n`,
  );
  const child = spawn(workerdBinary(), ['serve', '--experimental', config], { stdio: ['ignore', 'ignore', 'inherit'] });
  return { child, port, hopPort };
}

/** `wrangler dev` on the project, as a developer runs it locally. */
async function startWranglerDev(site: string, home: string): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, [WRANGLER, 'dev', '--ip', '127.0.0.1', '--port', String(port)], {
    cwd: site,
    env: { ...wranglerEnv('http://127.0.0.1:9/client/v4', home) },
    // Its stderr is left out: esbuild's watcher prints a Go stack trace when wrangler is stopped.
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await new Promise<void>((resolve) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (line.includes('Ready on')) resolve();
    });
  });
  return { child, port };
}

async function firstResponse(target: Target): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const res = await getWithHost(target.port, target.host, PATHS.get_1k).catch(() => undefined);
    if (res?.status === 200 && res.body.length === KiB) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${target.name} does not serve the site`);
}

async function main() {
  const work = benchWorkDir();
  const children: ChildProcess[] = [];
  const site = join(work.dir, 'site');
  writeSite(site);
  const home = join(work.dir, 'home');
  mkdirSync(home);
  try {
    const ledge = await startBenchLedge(work.dir);
    children.push(ledge.child);
    await promisify(execFile)(process.execPath, [WRANGLER, 'deploy'], {
      cwd: site,
      env: wranglerEnv(`http://127.0.0.1:${ledge.apiPort}/client/v4`, home),
    });
    const base = BASE ? await startBenchLedge(work.dir, BASE, 'ledge-base') : undefined;
    if (base) {
      children.push(base.child);
      await promisify(execFile)(process.execPath, [WRANGLER, 'deploy'], {
        cwd: site,
        env: wranglerEnv(`http://127.0.0.1:${base.apiPort}/client/v4`, home),
      });
    }
    const bare = await startWorkerdAssets(work.dir, join(site, 'public'));
    children.push(bare.child);
    const dev = await startWranglerDev(site, home);
    children.push(dev.child);
    dev.child.stdout!.resume();
    const targets: Target[] = [
      { name: 'ledge', port: ledge.fnPort, host: await ledge.host('assets-serve'), pid: ledge.child.pid! },
      ...(base
        ? [
            {
              name: 'ledge_base' as const,
              port: base.fnPort,
              host: await base.host('assets-serve'),
              pid: base.child.pid!,
            },
          ]
        : []),
      { name: 'workerd_assets', port: bare.port, host: `127.0.0.1:${bare.port}`, pid: bare.child.pid! },
      { name: 'workerd_assets_hop', port: bare.hopPort, host: `127.0.0.1:${bare.hopPort}`, pid: bare.child.pid! },
      { name: 'wrangler_dev', port: dev.port, host: `127.0.0.1:${dev.port}`, pid: dev.child.pid! },
    ];
    for (const t of targets) await firstResponse(t);
    report(await measure(targets, work.dir));
  } finally {
    await Promise.all(children.map(stop));
    work.remove();
  }
}

type Samples = Map<string, number[]>;

async function measure(targets: Target[], work: string): Promise<Samples> {
  const samples: Samples = new Map();
  const add = (key: string, value: number) => samples.set(key, [...(samples.get(key) ?? []), value]);
  for (const scenario of Object.keys(SIZES) as ScenarioName[]) {
    for (let round = 0; round < ROUNDS; round++) {
      // Each server goes first once every three rounds: a drift of the shared machine's speed hits all alike.
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      const figures = new Map<string, WrkResult>();
      for (const target of order) {
        const cpuBefore = treeCpuMs(target.pid);
        const r = await runWrk(
          `http://127.0.0.1:${target.port}`,
          {
            method: 'GET',
            path: PATHS[scenario],
            headers: { Host: target.host },
            // wrangler dev answers in seconds on a loaded machine: its answers count rather than time out.
            timeoutSeconds: 30,
          },
          work,
          SECONDS,
        );
        const cpuMs = treeCpuMs(target.pid) - cpuBefore;
        const perResponse = r.readBytesPerSec / r.requestsPerSec;
        if (perResponse < SIZES[scenario] * 0.99 || r.non2xx > 0 || r.errors > 0)
          throw new Error(
            `${target.name} ${scenario}: ${perResponse.toFixed(0)} bytes per response, ${r.non2xx} non-2xx, ${r.errors} errors`,
          );
        figures.set(target.name, r);
        add(`${target.name}.${scenario}.rps`, r.requestsPerSec);
        add(`${target.name}.${scenario}.mb_s`, r.readBytesPerSec / 1e6);
        add(`${target.name}.${scenario}.p99_ms`, r.p99Ms);
        add(`${target.name}.${scenario}.cpu_ms_per_req`, cpuMs / (r.requestsPerSec * SECONDS));
        process.stderr.write(
          `${target.name} ${scenario}: ${r.requestsPerSec.toFixed(0)} req/s, ${(r.readBytesPerSec / 1e6).toFixed(0)} MB/s, ` +
            `p99 ${r.p99Ms.toFixed(1)} ms, CPU ${(cpuMs / (r.requestsPerSec * SECONDS)).toFixed(3)} ms/req\n`,
        );
      }
      const rps = (name: string) => figures.get(name)!.requestsPerSec;
      add(`${scenario}.of_ceiling`, rps('ledge') / rps('workerd_assets'));
      add(`${scenario}.vs_wrangler_dev`, rps('ledge') / rps('wrangler_dev'));
      add(`${scenario}.of_hop`, rps('ledge') / rps('workerd_assets_hop'));
      if (figures.has('ledge_base')) add(`${scenario}.base_of_ceiling`, rps('ledge_base') / rps('workerd_assets'));
    }
  }
  return samples;
}

function median(values: number[] = []): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function report(samples: Samples) {
  const m = (key: string) => median(samples.get(key));
  const out = (text: string) => process.stdout.write(text);
  out(
    `\nAssets serving benchmark, ${new Date().toISOString()} (wrk -t1 -c32 -d${SECONDS}s keep-alive; medians of ${ROUNDS} rotating rounds)\n\n`,
  );
  out(
    '| GET | Ledge | workerd assets, bare (ceiling) | wrangler dev | Ledge / ceiling | target | Ledge / wrangler dev | target | met |\n',
  );
  out('|---|---|---|---|---|---|---|---|---|\n');
  const row = (scenario: ScenarioName, label: string, ceilingTarget: number) => {
    const ofCeiling = m(`${scenario}.of_ceiling`);
    const vsDev = m(`${scenario}.vs_wrangler_dev`);
    const cell = (name: string) =>
      `${m(`${name}.${scenario}.rps`).toFixed(0)} req/s, ${m(`${name}.${scenario}.mb_s`).toFixed(0)} MB/s`;
    out(
      `| ${label} | ${cell('ledge')} | ${cell('workerd_assets')} | ${cell('wrangler_dev')} | ${(ofCeiling * 100).toFixed(0)}% | ` +
        `>= ${ceilingTarget}% | ${vsDev.toFixed(2)}x | >= 3x | ${ofCeiling * 100 >= ceilingTarget && vsDev >= 3 ? 'yes' : 'NO'} |\n`,
    );
  };
  row('get_1k', '1 KiB', 85);
  row('get_1m', '1 MiB', 90);
  out('\nThe ceiling with one isolate hop in front (a one-line worker forwarding to the same assets service):\n\n');
  out('| GET | workerd assets behind a forwarding worker | Ledge / that |\n|---|---|---|\n');
  for (const scenario of Object.keys(SIZES) as ScenarioName[])
    out(
      `| ${scenario} | ${m(`workerd_assets_hop.${scenario}.rps`).toFixed(0)} req/s | ${(m(`${scenario}.of_hop`) * 100).toFixed(0)}% |\n`,
    );
  if (samples.has('get_1k.base_of_ceiling')) {
    out(
      '\nThe base build (`--base`) in the same rounds:\n\n| GET | Ledge base | base / ceiling | Ledge / ceiling |\n|---|---|---|---|\n',
    );
    for (const scenario of Object.keys(SIZES) as ScenarioName[])
      out(
        `| ${scenario} | ${m(`ledge_base.${scenario}.rps`).toFixed(0)} req/s, p99 ${m(`ledge_base.${scenario}.p99_ms`).toFixed(1)} ms, ` +
          `CPU ${m(`ledge_base.${scenario}.cpu_ms_per_req`).toFixed(3)} | ${(m(`${scenario}.base_of_ceiling`) * 100).toFixed(0)}% | ` +
          `${(m(`${scenario}.of_ceiling`) * 100).toFixed(0)}% |\n`,
      );
  }
  out(
    '\np99 ms and CPU per request (ms, whole process tree):\n\n| GET | Ledge | ceiling | wrangler dev |\n|---|---|---|---|\n',
  );
  for (const scenario of Object.keys(SIZES) as ScenarioName[]) {
    const cell = (name: string) =>
      `p99 ${m(`${name}.${scenario}.p99_ms`).toFixed(1)}, CPU ${m(`${name}.${scenario}.cpu_ms_per_req`).toFixed(3)}`;
    out(`| ${scenario} | ${cell('ledge')} | ${cell('workerd_assets')} | ${cell('wrangler_dev')} |\n`);
  }
  out(`\n${JSON.stringify(Object.fromEntries(samples))}\n`);
}

await main();
