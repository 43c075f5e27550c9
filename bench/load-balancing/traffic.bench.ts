// Benchmark: the load balancer data plane. The same two origins (nginx serving a 1 KiB and a 1 MiB file)
// behind Ledge's traffic port, behind HAProxy and behind nginx as a reverse proxy, in one run: every
// scenario alternates between the three for --rounds rounds (medians reported), each a
// `wrk -t1 -c32 -d<seconds>s`. Every proxy gets one thread / worker (Ledge's proxy is one event loop).
// Each run also reports the proxy's CPU per request (its process tree's user + system time over the run),
// which other load on a shared machine moves much less than req/s.
// Needs haproxy and nginx (`apt-get install -y haproxy nginx`) and wrk.
// Usage: npm run bench:lb-traffic [-- --seconds 10 --rounds 2 --warm-up 5 --only 1k|1m --proxies ledge,haproxy --cpu-prof <dir>]
// --only runs one answer size; --proxies some of the proxies (HAProxy is the reference: keep it for ratios);
// --cpu-prof writes a V8 CPU profile of the Ledge server into <dir> (for finding where the proxy's CPU goes;
// it slows Ledge a little, so figures of record are taken without it).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../../test/helpers/free-port.ts';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { benchServerArgs } from '../functions/processes.ts';
import { runWrk, type WrkResult } from '../functions/wrk.ts';
import { processTreeCpuMs } from './process-cpu.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const argument = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) || fallback : fallback;
};
const SECONDS = argument('--seconds', 10);
const ROUNDS = argument('--rounds', 2);
/** Unmeasured load on each proxy and scenario before the rounds (`--warm-up 0` to skip). */
const WARM_UP_SECONDS = process.argv.includes('--warm-up')
  ? Number(process.argv[process.argv.indexOf('--warm-up') + 1])
  : 5;
const HOST = 'www.bench.test';
const TOKEN = 'bench-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const ACCOUNT = '0123456789abcdef0123456789abcdef';
const textArgument = (name: string) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const ONLY = textArgument('--only');
const CPU_PROFILE_DIR = textArgument('--cpu-prof');
const SCENARIOS = [
  { name: 'GET 1 KiB', path: '/1k.bin', size: '1k' },
  { name: 'GET 1 MiB', path: '/1m.bin', size: '1m' },
].filter((scenario) => ONLY === undefined || scenario.size === ONLY);
const ALL_PROXIES = ['ledge', 'haproxy', 'nginx'] as const;
type Proxy = (typeof ALL_PROXIES)[number];
const PROXIES = ALL_PROXIES.filter((proxy) => textArgument('--proxies')?.split(',').includes(proxy) ?? true);

/** The peers and the load generator are Debian packages, not npm ones: say so before anything starts. */
function missingCommands(): string[] {
  return ['nginx', 'haproxy', 'wrk'].filter((command) => {
    const probe = spawnSync(command, ['-v'], { stdio: 'ignore' });
    return (probe.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
  });
}

async function main() {
  const missing = missingCommands();
  if (missing.length > 0) {
    console.error(`${missing.join(', ')} not found: apt-get install -y ${missing.join(' ')}`);
    process.exit(1);
  }
  const work = mkdtempSync(join(tmpdir(), 'ledge-lb-bench-'));
  const children: ChildProcess[] = [];
  try {
    const [originA, originB, haproxyPort, nginxPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const files = join(work, 'files');
    mkdirSync(files);
    // nginx's workers may run as another user (nobody when started as root): they must read the files.
    chmodSync(work, 0o755);
    chmodSync(files, 0o755);
    writeFileSync(join(files, '1k.bin'), Buffer.alloc(1024, 'a'));
    writeFileSync(join(files, '1m.bin'), Buffer.alloc(1024 * 1024, 'b'));
    children.push(startNginx(work, 'origins', originsConfig(work, files, [originA, originB])));
    children.push(startNginx(work, 'proxy', nginxProxyConfig(work, nginxPort, [originA, originB])));
    const haproxyConfig = join(work, 'haproxy.cfg');
    writeFileSync(haproxyConfig, haproxyConfigText(haproxyPort, [originA, originB]));
    const nginxProxy = children.at(-1)!;
    const haproxy = spawn('haproxy', ['-f', haproxyConfig, '-db'], { stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(haproxy);
    const ledge = await startLedge(join(work, 'ledge'));
    children.push(ledge.child);
    await configureLoadBalancer(ledge.apiUrl, [originA, originB]);
    const ports: Record<Proxy, number> = { ledge: ledge.trafficPort, haproxy: haproxyPort, nginx: nginxPort };
    const pids: Record<Proxy, number> = { ledge: ledge.child.pid!, haproxy: haproxy.pid!, nginx: nginxProxy.pid! };
    await new Promise((r) => setTimeout(r, 1_000));
    for (const proxy of PROXIES) await checkServes(ports[proxy], proxy);

    // Every proxy gets the same unmeasured warm-up per scenario first: Ledge's first seconds of load are
    // spent optimising its code and in its first full collection (p99 3.2-3.7x HAProxy's in that round,
    // ~2x after), which is start-up, not the steady state the rounds compare.
    for (const scenario of WARM_UP_SECONDS > 0 ? SCENARIOS : []) {
      for (const proxy of PROXIES) {
        await runWrk(
          `http://127.0.0.1:${ports[proxy]}`,
          { method: 'GET', path: scenario.path, headers: { Host: HOST } },
          work,
          WARM_UP_SECONDS,
        );
      }
    }

    const results: Record<string, Record<Proxy, Measured[]>> = {};
    for (let round = 1; round <= ROUNDS; round++) {
      for (const scenario of SCENARIOS) {
        results[scenario.name] ??= { ledge: [], haproxy: [], nginx: [] };
        for (const proxy of PROXIES) {
          const cpuBefore = processTreeCpuMs(pids[proxy]);
          const wrk = await runWrk(
            `http://127.0.0.1:${ports[proxy]}`,
            { method: 'GET', path: scenario.path, headers: { Host: HOST } },
            work,
            SECONDS,
          );
          const cpuAfter = processTreeCpuMs(pids[proxy]);
          const requests = wrk.requestsPerSec * SECONDS;
          const result: Measured = {
            ...wrk,
            cpuUsPerRequest:
              ((cpuAfter.userMs + cpuAfter.systemMs - cpuBefore.userMs - cpuBefore.systemMs) * 1000) / requests,
            systemUsPerRequest: ((cpuAfter.systemMs - cpuBefore.systemMs) * 1000) / requests,
          };
          if (result.errors > 0 || result.non2xx > 0) {
            console.error(`${proxy} ${scenario.name}: ${result.errors} socket errors, ${result.non2xx} non-2xx`);
          }
          results[scenario.name]![proxy].push(result);
          console.error(
            `round ${round} ${scenario.name} ${proxy}: ${result.requestsPerSec.toFixed(0)} req/s, ` +
              `p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, ` +
              `proxy CPU ${result.cpuUsPerRequest.toFixed(0)} us/request (${result.systemUsPerRequest.toFixed(0)} in the kernel)`,
          );
        }
      }
    }
    report(results);
  } finally {
    for (const child of children.reverse())
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    rmSync(work, { recursive: true, force: true });
  }
}

/** A wrk run and the proxy's CPU time (its process tree's user + system) per request during it. */
interface Measured extends WrkResult {
  cpuUsPerRequest: number;
  systemUsPerRequest: number;
}

function report(results: Record<string, Record<Proxy, Measured[]>>) {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(
    `\nLoad balancer data plane, wrk -t1 -c32 -d${SECONDS}s, median of ${ROUNDS} interleaved rounds (${new Date().toISOString()})\n`,
  );
  console.log('| scenario | proxy | req/s | p50 ms | p99 ms | req/s vs HAProxy | p99 vs HAProxy | proxy CPU us/req |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const [scenario, byProxy] of Object.entries(results)) {
    const base = {
      rps: byProxy.haproxy.length > 0 ? median(byProxy.haproxy.map((r) => r.requestsPerSec)) : NaN,
      p99: byProxy.haproxy.length > 0 ? median(byProxy.haproxy.map((r) => r.p99Ms)) : NaN,
    };
    for (const proxy of PROXIES) {
      const rps = median(byProxy[proxy].map((r) => r.requestsPerSec));
      const p50 = median(byProxy[proxy].map((r) => r.p50Ms));
      const p99 = median(byProxy[proxy].map((r) => r.p99Ms));
      const cpu = median(byProxy[proxy].map((r) => r.cpuUsPerRequest));
      console.log(
        `| ${scenario} | ${proxy} | ${rps.toFixed(0)} | ${p50.toFixed(2)} | ${p99.toFixed(2)} | ` +
          `${((rps / base.rps) * 100).toFixed(0)}% | ${(p99 / base.p99).toFixed(2)}x | ${cpu.toFixed(0)} |`,
      );
    }
  }
  console.log('\nTarget: Ledge >= 50% of HAProxy req/s, p99 <= 2x HAProxy.');
}

function originsConfig(work: string, files: string, ports: number[]): string {
  const servers = ports
    .map((port) => `server { listen 127.0.0.1:${port}; root ${files}; access_log off; }`)
    .join('\n  ');
  return nginxBase(work, 'origins') + `http {\n  keepalive_requests 100000;\n  ${servers}\n}\n`;
}

function nginxProxyConfig(work: string, port: number, origins: number[]): string {
  const servers = origins.map((p) => `server 127.0.0.1:${p};`).join(' ');
  return (
    nginxBase(work, 'proxy') +
    `http {\n  access_log off;\n  keepalive_requests 100000;\n  upstream origins { ${servers} keepalive 64; }\n` +
    `  server {\n    listen 127.0.0.1:${port};\n    location / {\n      proxy_pass http://origins;\n` +
    `      proxy_http_version 1.1;\n      proxy_set_header Connection "";\n      proxy_set_header Host $host;\n` +
    `      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n      proxy_set_header X-Forwarded-Proto $scheme;\n    }\n  }\n}\n`
  );
}

function nginxBase(work: string, name: string): string {
  const dir = join(work, `nginx-${name}`);
  mkdirSync(dir, { recursive: true });
  return (
    `worker_processes 1;\ndaemon off;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log warn;\n` +
    `events { worker_connections 4096; }\n`
  );
}

function startNginx(work: string, name: string, config: string): ChildProcess {
  const dir = join(work, `nginx-${name}`);
  const file = join(dir, 'nginx.conf');
  writeFileSync(
    file,
    config.replace(
      /^http \{/m,
      `http {\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;\n  fastcgi_temp_path ${dir}/fastcgi;\n  uwsgi_temp_path ${dir}/uwsgi;\n  scgi_temp_path ${dir}/scgi;`,
    ),
  );
  return spawn('nginx', ['-c', file, '-p', dir, '-e', join(dir, 'error.log')], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

function haproxyConfigText(port: number, origins: number[]): string {
  return [
    'global',
    '  nbthread 1',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 10s',
    '  timeout client 60s',
    '  timeout server 100s',
    '  option forwardfor',
    '  http-reuse always',
    'frontend web',
    `  bind 127.0.0.1:${port}`,
    '  default_backend origins',
    'backend origins',
    '  balance roundrobin',
    ...origins.map((p, i) => `  server o${i} 127.0.0.1:${p}`),
    '',
  ].join('\n');
}

async function startLedge(dataDir: string): Promise<{ child: ChildProcess; apiUrl: string; trafficPort: number }> {
  // Through bin/ledge, as `npm start` runs it (the launcher sets Node's flags); it execs Node, so the child's
  // PID is the server's.
  const child = spawn(
    join(ROOT, 'bin/ledge'),
    [...benchServerArgs(ROOT, dataDir, 0, 0), '--functions-processes', '1'],
    {
      env: {
        ...process.env,
        ...(CPU_PROFILE_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir ${resolve(CPU_PROFILE_DIR)}` } : {}),
        LEDGE_LOG_LEVEL: 'warn',
        LEDGE_CONFIG_DIR: join(dataDir, 'config'),
        LEDGE_BOOTSTRAP_API_TOKEN: TOKEN,
        LEDGE_BOOTSTRAP_ACCOUNT_ID: ACCOUNT,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const line = await new Promise<string>((resolveLine) =>
    createInterface({ input: child.stdout! }).once('line', resolveLine),
  );
  const info = JSON.parse(line) as { api_url: string; traffic_port: number };
  return { child, apiUrl: info.api_url, trafficPort: info.traffic_port };
}

async function configureLoadBalancer(apiUrl: string, origins: number[]): Promise<void> {
  const call = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { success: boolean; result: { id: string }; errors: unknown };
    if (!json.success) throw new Error(`${method} ${path}: ${JSON.stringify(json.errors)}`);
    return json.result.id;
  };
  const zone = await call('POST', '/zones', { name: 'bench.test', account: { id: ACCOUNT } });
  const pool = await call('POST', `/accounts/${ACCOUNT}/load_balancers/pools`, {
    name: 'bench',
    origins: origins.map((port, i) => ({ name: `o${i}`, address: '127.0.0.1', port })),
  });
  await call('POST', `/zones/${zone}/load_balancers`, { name: HOST, default_pools: [pool], fallback_pool: pool });
}

/** One request with the load balancer's Host (fetch cannot set Host): the proxy must answer the file. */
function checkServes(port: number, proxy: string): Promise<void> {
  return new Promise((resolveCheck, reject) => {
    request({ host: '127.0.0.1', port, path: '/1k.bin', headers: { host: HOST } }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () =>
        res.statusCode === 200 && bytes === 1024
          ? resolveCheck()
          : reject(new Error(`${proxy} does not serve the 1 KiB file: ${res.statusCode}, ${bytes} bytes`)),
      );
    })
      .on('error', (error) => reject(new Error(`${proxy} does not serve the 1 KiB file: ${error.message}`)))
      .end();
  });
}

await main();
