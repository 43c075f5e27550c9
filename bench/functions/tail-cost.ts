// Benchmark: two builds of the tutorial function (bench/functions/run.ts's scenarios, wrk -t1 -c32) in
// alternating 10 s rounds in one run, so a drift of the machine's speed hits both alike (whole-run A/Bs on
// this VM swung by 10-30% between runs). Targets: `--base <dir>` (a checkout of another commit, with
// node_modules), this build with no tail session, and this build with one `wrangler tail` session
// connected (its events counted; `--no-tail` skips it). Prints req/s medians and the CPU per request of
// Node and of workerd apart. `--targets` picks the targets by name, in the order each round measures them;
// `base_tailed` (the base with one session) compares the traced path of two builds directly.
// `hello` (a workerd hello-world answering 1 KiB from memory: the small-request ceiling, bench/functions/
// hello-world.ts) can be one of the targets: each build's req/s is then also given as a share of it, the
// median of the per-round shares (issue 31).
// Usage: node bench/functions/tail-cost.ts --base /tmp/ledge-base
//        [--scenario get_1k|put_1k|get_1m|put_1m|head_1k|list_small] [--seconds 10 --rounds 3 --no-tail]
//        [--targets base,head,head_tailed,base_tailed,hello] [--pace <ms>] [--pin] [--slices]
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import { benchServerArgs, freePort, stop, treeCpuMs, treePids, treeRunQueueMs, workerdCpuMs } from './processes.ts';
import { runWrk } from './wrk.ts';
import { deployTutorial, SMALL_OPS_SCRIPT, TUTORIAL_SCRIPT } from './tutorial.ts';
import { startWorkerdHello } from './hello-world.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const SECRET = 'bench-secret';
const CREDS = { email: 'bench@example.com', key: '0123456789abcdef0123456789abcdef01234' };
const ACCOUNT = '0123456789abcdef0123456789abcdef';
const argument = (name: string) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const SECONDS = Number(argument('--seconds') ?? 10);
const ROUNDS = Number(argument('--rounds') ?? 3);
const BASE = argument('--base');
/**
 * `--scenario put_1k` / `get_1m` / ...: measure that instead of GET 1 KiB (the builds still alternate round by
 * round, so this is also the same-run A/B of any two builds for one scenario; `--no-tail` skips the session).
 * `head_1k` and `list_small` deploy the tutorial with two more reads (bench/functions/small-ops-worker.js):
 * head() of the 1 KiB object, and list() of a prefix holding 10 small objects.
 */
const SCENARIOS = ['get_1k', 'put_1k', 'get_1m', 'put_1m', 'head_1k', 'list_small'] as const;
const SCENARIO = argument('--scenario') ?? 'get_1k';
if (!(SCENARIOS as readonly string[]).includes(SCENARIO)) throw new Error(`--scenario: one of ${SCENARIOS.join(', ')}`);
const WITH_TAIL = !process.argv.includes('--no-tail');
const TARGET_NAMES = ['base', 'head', 'head_tailed', 'base_tailed', 'hello'] as const;
type TargetName = (typeof TARGET_NAMES)[number];
/** What each target's req/s is compared with in the summary (when that target was measured). */
const COMPARED: Partial<Record<TargetName, TargetName[]>> = {
  head: ['base'],
  head_tailed: ['base', 'head', 'base_tailed'],
  base_tailed: ['base'],
};
const TARGETS = (argument('--targets')?.split(',') ?? ['base', 'head', ...(WITH_TAIL ? ['head_tailed'] : [])]).map(
  (name) => {
    if (!(TARGET_NAMES as readonly string[]).includes(name)) throw new Error(`--targets: unknown target ${name}`);
    return name as TargetName;
  },
);
/**
 * `--pace <ms>`: each of wrk's connections waits that long between requests, so every target runs at about
 * the same req/s and the CPU per request compares without the drift that a busy machine's changing
 * throughput gives it (the req/s figures then say nothing).
 */
const PACE_MS = argument('--pace') === undefined ? undefined : Number(argument('--pace'));
/**
 * `--pin`: wrk on core 0 only and every server's processes on core 1 only (the machine has 2), so wrk and the
 * server under test no longer take each other's core: where the latency tail comes from (issue 31 point 1).
 */
const PIN = process.argv.includes('--pin');
/** `--slices`: each measurement as 1 s wrk runs, every slice's p50/p99 printed: the tail over time. */
const SLICES = process.argv.includes('--slices');
const OBJECT_BYTES = SCENARIO === 'get_1m' ? 1024 * 1024 : 1024;
const LIST_PREFIX = 'small/';

interface Server {
  child: ChildProcess;
  apiPort: number;
  fnPort: number;
  host: string;
}

async function main() {
  if (!BASE) throw new Error('--base <dir>: a checkout of the build to compare with');
  const work = mkdtempSync(join(tmpdir(), 'ledge-tail-bench-'));
  const servers: Server[] = [];
  try {
    const base = await startServer(BASE, join(work, 'base'));
    servers.push(base);
    const head = await startServer(ROOT, join(work, 'head'));
    servers.push(head);
    const hello = TARGETS.includes('hello') ? await startHello(work) : undefined;
    if (hello) servers.push(hello);
    const samples: Record<string, number[]> = Object.fromEntries(TARGETS.map((t) => [t, []]));
    const p99s: Record<string, number[]> = Object.fromEntries(TARGETS.map((t) => [t, []]));
    /** CPU per request (ms) of each target, Node and workerd apart: where a session's cost goes. */
    const cpu: Record<string, { node: number[]; workerd: number[] }> = Object.fromEntries(
      TARGETS.map((t) => [t, { node: [], workerd: [] }]),
    );
    /** Time the server's threads waited for a core, per request (ms): CPU contention's share of latency. */
    const waits: Record<string, number[]> = Object.fromEntries(TARGETS.map((t) => [t, []]));
    /** wrk's own CPU per request (ms): the load generator shares the 2 cores with the server under test. */
    const wrkCpu: Record<string, number[]> = Object.fromEntries(TARGETS.map((t) => [t, []]));
    if (PIN) for (const server of servers) pin(server.child.pid!, '1');
    const measure = async (name: string, server: Server) => {
      if (PIN) pin(server.child.pid!, '1'); // processes started since (a restarted workerd)
      const [tree0, workerd0] = [treeCpuMs(server.child.pid!), workerdCpuMs(server.child.pid!)];
      const wait0 = treeRunQueueMs(server.child.pid!);
      const children0 = childrenCpuMs();
      const { requestsPerSec, requests, p99Ms } = await rps(server, work, name === 'hello');
      wrkCpu[name]!.push((childrenCpuMs() - children0) / requests);
      const [tree1, workerd1] = [treeCpuMs(server.child.pid!), workerdCpuMs(server.child.pid!)];
      waits[name]!.push((treeRunQueueMs(server.child.pid!) - wait0) / requests);
      samples[name]!.push(requestsPerSec);
      p99s[name]!.push(p99Ms);
      cpu[name]!.workerd.push((workerd1 - workerd0) / requests);
      cpu[name]!.node.push((tree1 - tree0 - (workerd1 - workerd0)) / requests);
    };
    let events = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of TARGETS) {
        const server = target === 'hello' ? hello! : target.startsWith('base') ? base : head;
        if (!target.endsWith('_tailed')) {
          await measure(target, server);
          continue;
        }
        const tail = await openTail(server, () => events++);
        await measure(target, server);
        tail.close();
        await new Promise((r) => setTimeout(r, 1_500)); // the isolates notice the flag is gone
      }
      process.stderr.write(`round ${round + 1}: ${JSON.stringify(samples)}\n`);
    }
    const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
    const medians = Object.fromEntries(Object.entries(samples).map(([name, v]) => [name, median(v)]));
    const change = (name: string, vs: string) =>
      medians[vs] === undefined ? '' : ` (${((medians[name]! / medians[vs] - 1) * 100).toFixed(1)}% vs ${vs})`;
    const described = TARGETS.map(
      (name) => `${name} ${medians[name]!.toFixed(0)}${(COMPARED[name] ?? []).map((v) => change(name, v)).join('')}`,
    );
    process.stdout.write(
      `${SCENARIO} req/s (medians of ${ROUNDS}): ${described.join(', ')}; events received ${events}\n${JSON.stringify(samples)}\n`,
    );
    process.stdout.write(
      `p99 ms (medians): ${TARGETS.map((name) => `${name} ${median(p99s[name]!).toFixed(1)}`).join(', ')}\n`,
    );
    if (samples['hello'])
      for (const name of TARGETS.filter((t) => t !== 'hello')) {
        const shares = samples[name]!.map((v, round) => v / samples['hello']![round]!);
        process.stdout.write(
          `${name} / hello-world ceiling: ${(median(shares) * 100).toFixed(1)}% (rounds: ${shares.map((v) => (v * 100).toFixed(1)).join(' ')})\n`,
        );
      }
    process.stdout.write(
      `run-queue wait per request, server threads (ms, medians): ${TARGETS.map((n) => `${n} ${median(waits[n]!).toFixed(3)}`).join(', ')}\n` +
        `wrk's own CPU per request (ms, medians): ${TARGETS.map((n) => `${n} ${median(wrkCpu[n]!).toFixed(3)}`).join(', ')}\n`,
    );
    for (const [name, { node, workerd }] of Object.entries(cpu).filter(([, c]) => c.node.length > 0))
      process.stdout.write(
        `CPU per request, ${name}: Node ${median(node).toFixed(3)} ms, workerd ${median(workerd).toFixed(3)} ms ` +
          `(rounds: Node ${node.map((v) => v.toFixed(3)).join(' ')}; workerd ${workerd.map((v) => v.toFixed(3)).join(' ')})\n`,
      );
  } finally {
    for (const s of servers) await stop(s.child);
    rmSync(work, { recursive: true, force: true });
  }
}

async function rps(
  server: Server,
  work: string,
  hello: boolean,
): Promise<{ requestsPerSec: number; requests: number; p99Ms: number }> {
  const put = SCENARIO === 'put_1k' || SCENARIO === 'put_1m';
  const path = hello
    ? '/'
    : SCENARIO === 'head_1k'
      ? '/__head/cat-pic.jpg'
      : SCENARIO === 'list_small'
        ? `/__list/${LIST_PREFIX}`
        : '/cat-pic.jpg';
  const cpus = PIN ? '0' : undefined;
  const run = (seconds: number) =>
    runWrk(
      `http://127.0.0.1:${server.fnPort}`,
      put && !hello
        ? {
            method: 'PUT',
            path: '/',
            headers: { Host: server.host, 'X-Custom-Auth-Key': SECRET },
            bodyBytes: SCENARIO === 'put_1m' ? 1024 * 1024 : 1024,
            keys: SCENARIO === 'put_1m' ? 64 : 1000,
            delayMs: PACE_MS,
            cpus,
          }
        : { method: 'GET', path, headers: { Host: server.host }, delayMs: PACE_MS, cpus },
      work,
      seconds,
    );
  if (SLICES) {
    const slices = [];
    for (let i = 0; i < SECONDS; i++) slices.push(await run(1));
    process.stderr.write(
      `${hello ? 'hello' : server.host} slices (req/s p50/p99 ms): ` +
        slices.map((r) => `${r.requestsPerSec.toFixed(0)} ${r.p50Ms.toFixed(1)}/${r.p99Ms.toFixed(1)}`).join(', ') +
        '\n',
    );
    const sorted = slices.map((r) => r.p99Ms).sort((a, b) => a - b);
    const mean = slices.reduce((sum, r) => sum + r.requestsPerSec, 0) / slices.length;
    return {
      requestsPerSec: mean,
      requests: Math.max(1, Math.round(mean * SECONDS)),
      p99Ms: sorted[Math.floor(sorted.length / 2)]!,
    };
  }
  const result = await run(SECONDS);
  if (result.errors > 0 || result.non2xx > 0)
    process.stderr.write(`warning: ${result.errors} socket errors, ${result.non2xx} non-2xx answers\n`);
  return {
    requestsPerSec: result.requestsPerSec,
    requests: Math.max(1, Math.round(result.requestsPerSec * SECONDS)),
    p99Ms: result.p99Ms,
  };
}

/**
 * CPU (ms) of this process's children that have ended and been waited for (/proc/self/stat cutime + cstime):
 * across one runWrk, wrk's own CPU.
 */
function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** Pins every process (all threads) of a tree to `cpus`. */
function pin(rootPid: number, cpus: string): void {
  for (const pid of treePids(rootPid)) {
    try {
      execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
    } catch {
      // exited meanwhile
    }
  }
}

/** The workerd hello-world ceiling, as a Server (its own process tree: CPU per request is workerd's). */
async function startHello(work: string): Promise<Server> {
  const { child, port } = await startWorkerdHello(work);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${port}/`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error('the workerd hello-world did not answer');
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, apiPort: 0, fnPort: port, host: `127.0.0.1:${port}` };
}

async function openTail(server: Server, onEvent: () => void): Promise<WebSocket> {
  const created = (await api(server, 'POST', '/workers/scripts/r2-worker/tails', { filters: [] })) as { url: string };
  const socket = new WebSocket(created.url, 'trace-v1');
  socket.on('message', onEvent);
  await new Promise((r) => socket.once('open', r));
  return socket;
}

async function api(server: Server, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${server.apiPort}/client/v4/accounts/${ACCOUNT}${path}`, {
    method,
    headers: { 'x-auth-email': CREDS.email, 'x-auth-key': CREDS.key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { success: boolean; result: unknown; errors: unknown[] };
  if (!json.success) throw new Error(`${method} ${path}: ${JSON.stringify(json.errors)}`);
  return json.result;
}

async function startServer(root: string, dataDir: string): Promise<Server> {
  const [apiPort, fnPort] = [await freePort(), await freePort()];
  const child = spawn(join(root, 'bin/ledge'), benchServerArgs(root, dataDir, apiPort, fnPort), {
    env: {
      ...process.env,
      LEDGE_LOG_LEVEL: 'warn',
      LEDGE_BOOTSTRAP_EMAIL: CREDS.email,
      LEDGE_BOOTSTRAP_API_KEY: CREDS.key,
      LEDGE_BOOTSTRAP_ACCOUNT_ID: ACCOUNT,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((r) => createInterface({ input: child.stdout! }).once('line', r));
  const server: Server = { child, apiPort, fnPort, host: '' };
  try {
    await deployTutorialOn(server);
  } catch (error) {
    await stop(child); // a build that fails to deploy leaves no server behind
    throw error;
  }
  return server;
}

/** The tutorial function with its bucket, secret and workers.dev route, and the object it serves. */
async function deployTutorialOn(server: Server): Promise<void> {
  const small = SCENARIO === 'head_1k' || SCENARIO === 'list_small';
  const script = small ? SMALL_OPS_SCRIPT : TUTORIAL_SCRIPT;
  const host = await deployTutorial(server.apiPort, { ...CREDS, account: ACCOUNT }, SECRET, script);
  server.host = `${host}:${server.fnPort}`;
  await put(server, 'k'.repeat(OBJECT_BYTES));
  if (SCENARIO === 'list_small') for (let i = 0; i < 10; i++) await put(server, 's'.repeat(100), `/${LIST_PREFIX}${i}`);
}

function put(server: Server, body: string, path = '/cat-pic.jpg'): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const deadline = Date.now() + 60_000;
    const attempt = () => {
      const req = request(
        {
          host: '127.0.0.1',
          port: server.fnPort,
          method: 'PUT',
          path,
          headers: { host: server.host, 'X-Custom-Auth-Key': SECRET },
          agent: false,
        },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 || res.statusCode === 201 ? resolvePromise() : retry()));
        },
      );
      req.on('error', retry);
      req.end(body);
    };
    const retry = () => (Date.now() > deadline ? reject(new Error('PUT failed')) : setTimeout(attempt, 100));
    attempt();
  });
}

await main();
