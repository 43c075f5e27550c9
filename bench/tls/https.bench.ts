// Benchmark: HTTPS on the traffic TLS port against HAProxy terminating TLS in front of the same origins, in one
// run: GET 1 KiB through a Workers route (the Worker answers from memory on the functions port) and through a
// load balancer (nginx serving a 1 KiB file), new TLS handshakes per second (the load balancer's GET with
// `Connection: close`: every request is a new TCP connection and a full handshake), and the plain-HTTP load
// balancer beside them. Every scenario alternates between Ledge and HAProxy for --rounds rounds (medians
// reported), each a `wrk -t1 -c32 -d<seconds>s`; both present the same ECDSA P-256 certificate and both
// proxies get one thread. wrk sends the URL's host as SNI: it runs in a private mount namespace whose
// /etc/hosts names the sites (needs root, as the rest of the benches' machine setup).
// Each proxy first serves each scenario for --warm-up seconds, unmeasured: Ledge's CPU per request keeps
// falling for its first ~20-30 s under load (the JIT, the heap's sizing), and a server runs far longer.
// Needs haproxy, nginx and wrk (`apt-get install -y haproxy nginx wrk`).
// Usage: npm run bench:https -- [--seconds 10 --rounds 3 --warm-up 10 --only route,lb,handshake,plain,plain-close
//   --cpu-prof <dir> --ledge-node-flags "<flags>" --perf <dir>] (the flags go to the Node of Ledge, through
//   NODE_OPTIONS as Ledge runs from bin/ledge, and to the node:tls floors, e.g. "--perf-basic-prof" for perf;
//   --perf records each measured run of those two with `perf record -g` into <dir>, with the number of requests
//   it covers, to compare their CPU per request by symbol;
//   --perf-stat <events> counts perf events in each measured run of those two and prints them per request, e.g.
//   "raw_syscalls:sys_enter,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_read").
// Beside the load balancer's scenarios run Node's floors (node:tls answering alone, and a minimal Node proxy, over
// TLS or plain HTTP as the scenario) and Ledge's proxy engine alone (bench/tls/data-plane-proxy.ts: `data-plane`),
// so one run splits Ledge's CPU per request into Node's, the engine's and the rest's (routing).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { makeCertificate } from '../../test/tls/helpers.ts';
import { freePort } from '../../test/helpers/free-port.ts';
import { HELLO_MODULE } from '../functions/hello-world.ts';
import { benchServerArgs, treeCpuMs, workerdCpuMs } from '../functions/processes.ts';
import { runWrk, type Scenario, type WrkResult } from '../functions/wrk.ts';
import { processTreeCpuMs } from '../load-balancing/process-cpu.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const text = (name: string) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const number = (name: string, fallback: number) => Number(text(name) ?? fallback);
const SECONDS = number('--seconds', 10);
const ROUNDS = number('--rounds', 3);
const WARM_UP = number('--warm-up', 10);
const CPU_PROFILE_DIR = text('--cpu-prof');
const PERF_DIR = text('--perf');
const PERF_STAT_EVENTS = text('--perf-stat');
const LEDGE_NODE_FLAGS = (text('--ledge-node-flags') ?? '').split(' ').filter((flag) => flag !== '');
const TOKEN = 'bench-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const ACCOUNT = '0123456789abcdef0123456789abcdef';
const ZONE = 'bench.test';
const ROUTE_HOST = `www.${ZONE}`;
const LB_HOST = `lb.${ZONE}`;
const SCRIPT = 'bench-site';

type Proxy = 'ledge' | 'haproxy' | 'node-tls' | 'node-proxy' | 'data-plane';
const PROXIES: readonly Proxy[] = ['ledge', 'haproxy', 'node-tls', 'node-proxy', 'data-plane'];
const TLS_FLOORS: readonly Proxy[] = ['node-tls', 'node-proxy', 'data-plane'];
const PLAIN_FLOORS: readonly Proxy[] = ['node-proxy', 'data-plane'];
interface Ports {
  plain: number;
  tls: number;
}
interface BenchScenario {
  key: string;
  name: string;
  url: (ports: Ports) => string;
  request: Omit<Scenario, 'hostsFile'>;
  /**
   * What runs beside Ledge and HAProxy: Node's floors, node:tls answering alone (node-tls-floor.ts) and a
   * minimal Node proxy (node-tls-proxy-floor.ts, TLS or plain); and Ledge's proxy engine alone
   * (data-plane-proxy.ts).
   */
  floors?: readonly Proxy[];
}

const ALL_SCENARIOS: BenchScenario[] = [
  {
    key: 'route',
    name: 'HTTPS route, GET 1 KiB',
    url: (p) => `https://${ROUTE_HOST}:${p.tls}`,
    request: { method: 'GET', path: '/', headers: {} },
  },
  {
    key: 'lb',
    name: 'HTTPS load balancer, GET 1 KiB',
    url: (p) => `https://${LB_HOST}:${p.tls}`,
    request: { method: 'GET', path: '/1k.bin', headers: {} },
    floors: TLS_FLOORS,
  },
  {
    key: 'handshake',
    name: 'new TLS handshakes (LB, Connection: close)',
    url: (p) => `https://${LB_HOST}:${p.tls}`,
    request: { method: 'GET', path: '/1k.bin', headers: { Connection: 'close' } },
    floors: TLS_FLOORS,
  },
  {
    key: 'plain',
    name: 'plain HTTP load balancer, GET 1 KiB',
    url: (p) => `http://127.0.0.1:${p.plain}`,
    request: { method: 'GET', path: '/1k.bin', headers: { Host: LB_HOST } },
    floors: PLAIN_FLOORS,
  },
  {
    // What a new connection costs without TLS: the part of a handshake's figure that is not the handshake.
    key: 'plain-close',
    name: 'new plain connections (LB, Connection: close)',
    url: (p) => `http://127.0.0.1:${p.plain}`,
    request: { method: 'GET', path: '/1k.bin', headers: { Host: LB_HOST, Connection: 'close' } },
    floors: PLAIN_FLOORS,
  },
];
const SCENARIOS = ALL_SCENARIOS.filter((s) => text('--only')?.split(',').includes(s.key) ?? true);

interface Measured extends WrkResult {
  cpuUsPerRequest: number;
}

/** `perf stat -x,` output: each event's count divided by the requests of the run. */
function printPerEvent(proxy: Proxy, file: string, requests: number): void {
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [count, , event] = line.split(',');
    if (!event || !/^\d+$/.test(count ?? '')) continue;
    console.error(`perf stat ${proxy}: ${event} ${(Number(count) / requests).toFixed(2)} per request`);
  }
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'ledge-tls-bench-'));
  const children: ChildProcess[] = [];
  try {
    const hostsFile = join(work, 'hosts');
    writeFileSync(hostsFile, `127.0.0.1 localhost ${ROUTE_HOST} ${LB_HOST}\n`);
    const cert = makeCertificate([ROUTE_HOST, LB_HOST]);
    const [origin, haproxyPlain, haproxyTls] = [await freePort(), await freePort(), await freePort()];
    children.push(startOrigin(work, origin));
    const ledge = await startLedge(join(work, 'ledge'));
    children.push(ledge.child);
    const workerHost = await configureLedge(ledge.apiUrl, origin, cert);
    const pem = join(work, 'haproxy.pem');
    writeFileSync(pem, cert.certificate + readFileSync(cert.keyFile, 'utf8'));
    const config = join(work, 'haproxy.cfg');
    writeFileSync(
      config,
      haproxyConfig({ plain: haproxyPlain, tls: haproxyTls }, pem, origin, ledge.functionsPort, workerHost),
    );
    const haproxy = spawn('haproxy', ['-f', config, '-db'], { stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(haproxy);
    const floor = spawn(
      process.execPath,
      [join(ROOT, 'bench/tls/node-tls-floor.ts'), cert.certificateFile, cert.keyFile],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    children.push(floor);
    const nodeProxy = (script: string) =>
      spawn(
        process.execPath,
        [...LEDGE_NODE_FLAGS, join(ROOT, script), cert.certificateFile, cert.keyFile, String(origin)],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
    const proxyFloor = nodeProxy('bench/tls/node-tls-proxy-floor.ts');
    children.push(proxyFloor);
    const dataPlane = nodeProxy('bench/tls/data-plane-proxy.ts');
    children.push(dataPlane);
    // Each prints its TLS port, then its plain one if it has one.
    const portsOf = async (child: ChildProcess): Promise<Ports> => {
      const line = await new Promise<string>((read) => createInterface({ input: child.stdout! }).once('line', read));
      const [tls, plain] = line.split(' ').map(Number);
      return { tls: tls!, plain: plain ?? 0 };
    };
    const ports: Record<Proxy, Ports> = {
      ledge: { plain: ledge.trafficPort, tls: ledge.tlsPort },
      haproxy: { plain: haproxyPlain, tls: haproxyTls },
      'node-tls': await portsOf(floor),
      'node-proxy': await portsOf(proxyFloor),
      'data-plane': await portsOf(dataPlane),
    };
    // The proxy's own CPU: HAProxy's process; Ledge's process tree without its workerd children (the Worker's
    // CPU is spent for both proxies alike).
    const cpuMs: Record<Proxy, () => number> = {
      ledge: () => treeCpuMs(ledge.child.pid!) - workerdCpuMs(ledge.child.pid!),
      haproxy: () => {
        const cpu = processTreeCpuMs(haproxy.pid!);
        return cpu.userMs + cpu.systemMs;
      },
      'node-tls': () => treeCpuMs(floor.pid!),
      'node-proxy': () => treeCpuMs(proxyFloor.pid!),
      'data-plane': () => treeCpuMs(dataPlane.pid!),
    };
    const proxiesOf = (scenario: BenchScenario): Proxy[] => ['ledge', 'haproxy', ...(scenario.floors ?? [])];
    await new Promise((r) => setTimeout(r, 1_000));
    let perfRuns = 0;
    const perfPids: Partial<Record<Proxy, number>> = {
      ledge: ledge.child.pid,
      'node-proxy': proxyFloor.pid,
      'data-plane': dataPlane.pid,
    };
    const run = async (proxy: Proxy, scenario: BenchScenario, seconds: number, measured = false): Promise<Measured> => {
      const before = cpuMs[proxy]();
      const perfFile = PERF_DIR && measured && perfPids[proxy] ? `${proxy}-${scenario.key}-${++perfRuns}.data` : '';
      // perf samples the run's middle seconds (it starts with wrk and stops a second before it).
      const perf = perfFile
        ? spawn(
            'perf',
            ['record', '-F', '999', '-g', '-q', '-p', String(perfPids[proxy]), '-o', join(PERF_DIR!, perfFile)].concat([
              '--',
              'sleep',
              String(seconds - 1),
            ]),
            { stdio: 'ignore' },
          )
        : undefined;
      const statFile = PERF_STAT_EVENTS && measured && perfPids[proxy] ? join(work, `perf-stat-${proxy}.csv`) : '';
      const stat = statFile
        ? spawn(
            'perf',
            ['stat', '-x', ',', '-e', PERF_STAT_EVENTS!, '-p', String(perfPids[proxy]), '-o', statFile, '--'].concat([
              'sleep',
              String(seconds - 1),
            ]),
            { stdio: 'ignore' },
          )
        : undefined;
      const result = await runWrk(scenario.url(ports[proxy]), { ...scenario.request, hostsFile }, work, seconds);
      if (stat) {
        if (stat.exitCode === null) await new Promise((r) => stat.once('exit', r));
        printPerEvent(proxy, statFile, result.requestsPerSec * (seconds - 1));
      }
      if (perf) {
        if (perf.exitCode === null) await new Promise((r) => perf.once('exit', r));
        const requests = Math.round(result.requestsPerSec * (seconds - 1));
        console.error(`perf: ${join(PERF_DIR!, perfFile)} holds ~${requests} requests (perf report -i <file>)`);
      }
      const requests = Math.max(1, result.requestsPerSec * seconds);
      return { ...result, cpuUsPerRequest: ((cpuMs[proxy]() - before) * 1000) / requests };
    };
    for (const scenario of WARM_UP > 0 ? SCENARIOS : []) {
      for (const proxy of proxiesOf(scenario)) {
        const check = await run(proxy, scenario, WARM_UP);
        if (check.requestsPerSec === 0 || check.non2xx > 0) {
          throw new Error(`${proxy} does not serve ${scenario.name}: ${JSON.stringify(check)}`);
        }
      }
    }
    const results = new Map<string, Record<Proxy, Measured[]>>();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const scenario of SCENARIOS) {
        const order = round % 2 === 1 ? proxiesOf(scenario) : proxiesOf(scenario).reverse();
        for (const proxy of order) {
          const result = await run(proxy, scenario, SECONDS, true);
          if (result.errors > 0 || result.non2xx > 0) {
            console.error(`${proxy} ${scenario.name}: ${result.errors} socket errors, ${result.non2xx} non-2xx`);
          }
          const byProxy = results.get(scenario.name) ?? {
            ledge: [],
            haproxy: [],
            'node-tls': [],
            'node-proxy': [],
            'data-plane': [],
          };
          byProxy[proxy].push(result);
          results.set(scenario.name, byProxy);
          console.error(
            `round ${round} ${scenario.name} ${proxy}: ${result.requestsPerSec.toFixed(0)} req/s, ` +
              `p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, ` +
              `CPU ${result.cpuUsPerRequest.toFixed(0)} us/request`,
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

function report(results: Map<string, Record<Proxy, Measured[]>>) {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(
    `\nHTTPS vs HAProxy, wrk -t1 -c32 -d${SECONDS}s, median of ${ROUNDS} interleaved rounds ` +
      `(${new Date().toISOString()}, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})\n`,
  );
  console.log(
    '| scenario | proxy | req/s | p50 ms | p99 ms | req/s vs HAProxy | same round | p99 vs HAProxy | proxy CPU us/req |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const [scenario, byProxy] of results) {
    const baseRps = median(byProxy.haproxy.map((r) => r.requestsPerSec));
    const baseP99 = median(byProxy.haproxy.map((r) => r.p99Ms));
    for (const proxy of PROXIES) {
      if (byProxy[proxy].length === 0) continue;
      const rps = median(byProxy[proxy].map((r) => r.requestsPerSec));
      const p50 = median(byProxy[proxy].map((r) => r.p50Ms));
      const p99 = median(byProxy[proxy].map((r) => r.p99Ms));
      const cpu = median(byProxy[proxy].map((r) => r.cpuUsPerRequest));
      // Each round's ratio to HAProxy's run of the same round (minutes apart at most, not the whole run apart):
      // the machine's speed drifts between rounds, and this median is the one that drift moves least.
      const sameRound = median(byProxy[proxy].map((r, i) => r.requestsPerSec / byProxy.haproxy[i]!.requestsPerSec));
      console.log(
        `| ${scenario} | ${proxy} | ${rps.toFixed(0)} | ${p50.toFixed(2)} | ${p99.toFixed(2)} | ` +
          `${((rps / baseRps) * 100).toFixed(0)}% | ${(sameRound * 100).toFixed(0)}% | ${(p99 / baseP99).toFixed(2)}x | ` +
          `${cpu.toFixed(0)} |`,
      );
    }
  }
  console.log('\nTargets: HTTPS >= 80% of HAProxy req/s with p99 <= 1.5x; plain HTTP >= 86%, p99 <= 1.38x.');
  console.log('node-tls: node:tls alone answering 1 KiB (no HTTP parsing, no proxying): the floor of HTTPS in Node.');
  console.log(
    'node-proxy: Node relaying to the same origin (node:tls, or node:net on the plain scenarios), nothing else ' +
      '(no routing, checks or timeouts).',
  );
  console.log(
    "data-plane: Ledge's proxy engine alone (src/proxy/, with its TLS on the HTTPS scenarios) with a fixed route, " +
      'in a process of its own.',
  );
}

/** nginx serving the 1 KiB file (the load balancer's origin for both proxies). */
function startOrigin(work: string, port: number): ChildProcess {
  const dir = join(work, 'nginx');
  const files = join(dir, 'files');
  mkdirSync(files, { recursive: true });
  // nginx's workers may run as another user (nobody when started as root): they must read the files.
  chmodSync(work, 0o755);
  chmodSync(dir, 0o755);
  chmodSync(files, 0o755);
  writeFileSync(join(files, '1k.bin'), Buffer.alloc(1024, 'a'));
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((n) => `${n}_temp_path ${dir}/${n};`).join(' ');
  const file = join(dir, 'nginx.conf');
  writeFileSync(
    file,
    `worker_processes 1;\ndaemon off;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log warn;\n` +
      `events { worker_connections 4096; }\nhttp {\n  ${temp}\n  access_log off;\n  keepalive_requests 100000;\n` +
      `  server { listen 127.0.0.1:${port}; root ${files}; }\n}\n`,
  );
  return spawn('nginx', ['-c', file, '-p', dir, '-e', join(dir, 'error.log')], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** HAProxy as the same two sites: the load balancer's origin, and the Worker's functions port by its host. */
function haproxyConfig(ports: Ports, pem: string, origin: number, functionsPort: number, workerHost: string): string {
  return [
    'global',
    '  nbthread 1',
    '  maxconn 4096',
    '  ssl-default-bind-options ssl-min-ver TLSv1.2',
    'defaults',
    '  mode http',
    '  timeout connect 10s',
    '  timeout client 60s',
    '  timeout server 100s',
    '  option forwardfor',
    '  http-reuse always',
    'frontend plain',
    `  bind 127.0.0.1:${ports.plain}`,
    '  default_backend origin',
    'frontend tls',
    `  bind 127.0.0.1:${ports.tls} ssl crt ${pem} alpn h2,http/1.1`,
    '  http-request set-header X-Forwarded-Proto https',
    `  use_backend worker if { ssl_fc_sni -i ${ROUTE_HOST} }`,
    '  default_backend origin',
    'backend origin',
    `  server o0 127.0.0.1:${origin}`,
    'backend worker',
    `  http-request set-header Host ${workerHost}`,
    `  server w0 127.0.0.1:${functionsPort}`,
    '',
  ].join('\n');
}

async function startLedge(dataDir: string) {
  // Through bin/ledge, as `npm start` runs it (the launcher sets Node's flags); it execs Node, so the child's
  // PID is the server's. The bench's own flags for that Node go through NODE_OPTIONS.
  const nodeOptions = [
    ...(CPU_PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', resolve(CPU_PROFILE_DIR)] : []),
    ...LEDGE_NODE_FLAGS,
  ];
  const child = spawn(
    join(ROOT, 'bin/ledge'),
    [...benchServerArgs(ROOT, dataDir, 0, 0), '--functions-processes', '1'],
    {
      env: {
        ...process.env,
        ...(nodeOptions.length > 0 ? { NODE_OPTIONS: nodeOptions.join(' ') } : {}),
        LEDGE_LOG_LEVEL: 'warn',
        LEDGE_CONFIG_DIR: join(dataDir, 'config'),
        LEDGE_BOOTSTRAP_API_TOKEN: TOKEN,
        LEDGE_BOOTSTRAP_ACCOUNT_ID: ACCOUNT,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  // (The first JSON line: V8 tracing flags in --ledge-node-flags print to stdout too.)
  const line = await new Promise<string>((resolveLine) => {
    const lines = createInterface({ input: child.stdout! });
    const onLine = (text: string) => {
      if (!text.startsWith('{')) return;
      lines.off('line', onLine);
      resolveLine(text);
    };
    lines.on('line', onLine);
  });
  const info = JSON.parse(line) as {
    api_url: string;
    traffic_port: number;
    traffic_tls_port: number;
    functions_port: number;
  };
  return {
    child,
    apiUrl: info.api_url,
    trafficPort: info.traffic_port,
    tlsPort: info.traffic_tls_port,
    functionsPort: info.functions_port,
  };
}

/** The zone, its certificate, the Worker and its route, the pool and load balancer; returns the Worker's own host. */
async function configureLedge(
  apiUrl: string,
  origin: number,
  cert: { certificate: string; privateKey: string },
): Promise<string> {
  const call = async (method: string, path: string, body?: unknown) => {
    const form = body instanceof FormData;
    const res = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(form ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : form ? body : JSON.stringify(body),
    });
    const json = (await res.json()) as { success: boolean; result: Record<string, unknown>; errors: unknown };
    if (!json.success) throw new Error(`${method} ${path}: ${JSON.stringify(json.errors)}`);
    return json.result;
  };
  const a = `/accounts/${ACCOUNT}`;
  const zone = String((await call('POST', '/zones', { name: ZONE, account: { id: ACCOUNT } }))['id']);
  await call('POST', `/zones/${zone}/custom_certificates`, {
    certificate: cert.certificate,
    private_key: cert.privateKey,
  });
  const form = new FormData();
  form.set('metadata', JSON.stringify({ main_module: 'index.js', bindings: [], compatibility_date: '2025-01-01' }));
  form.set('index.js', new File([HELLO_MODULE], 'index.js', { type: 'application/javascript+module' }));
  await call('PUT', `${a}/workers/scripts/${SCRIPT}`, form);
  await call('POST', `${a}/workers/scripts/${SCRIPT}/subdomain`, { enabled: true });
  await call('POST', `/zones/${zone}/workers/routes`, { pattern: `${ROUTE_HOST}/*`, script: SCRIPT });
  const pool = String(
    (
      await call('POST', `${a}/load_balancers/pools`, {
        name: 'bench',
        origins: [{ name: 'o0', address: '127.0.0.1', port: origin }],
      })
    )['id'],
  );
  await call('POST', `/zones/${zone}/load_balancers`, { name: LB_HOST, default_pools: [pool], fallback_pool: pool });
  const subdomain = String((await call('GET', `${a}/workers/subdomain`))['subdomain']);
  return `${SCRIPT}.${subdomain}.localhost`;
}

await main();
