// Benchmark: what workerd itself allows a small PUT on this machine, with no platform around it (issue 31
// point 5). One workerd process runs three workers:
// - `hello`: answers 1 KiB from memory (the ceiling every small-request figure is a share of, as hello-world.ts);
// - `r2_put`: `await env.B.put(key, request.body)` through workerd's own R2 binding;
// - `fetch_put`: the same body sent with `fetch()` through a service binding (the leanest subrequest there is).
// Both PUT workers talk to one Node server that stores nothing: it reads the body and answers a fixed R2 put
// answer. So their req/s is an upper bound for any platform behind workerd's R2 binding (or behind one HTTP
// subrequest per write): the server's share of the machine is as small as a server's can be.
// Targets alternate in rounds (wrk -t1 -c32, as tail-cost.ts), so a drift of the machine hits all alike.
// Prints per target the req/s, the share of the ceiling (median of per-round shares), p99, CPU per request of
// workerd and of the no-op server, and the share of the machine's CPU the hypervisor took (steal).
// Usage: node bench/functions/runtime-bounds.ts [--seconds 8] [--rounds 3] [--flags stock|platform]
//   --flags platform: workerd with the V8 flags Ledge gives its function processes (src/workerd/config/v8-flags.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workerdBinary } from '../../src/workerd/workerd-process.ts';
import { FUNCTION_V8_FLAGS } from '../../src/workerd/config/index.ts';
import { HELLO_MODULE } from './hello-world.ts';
import { freePort, stop, treeCpuMs } from './processes.ts';
import { runWrk } from './wrk.ts';

const argument = (name: string) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};

/** `--noop-server <port>`: the child that stores nothing (its CPU is measured apart from the bench's). */
if (argument('--noop-server') !== undefined) {
  // The binding's answer to a put (R2PutResponse, as src/r2/wire/wire-object.ts sends it).
  const answer = Buffer.from(
    JSON.stringify({
      name: 'k',
      version: '0123456789abcdef0123456789abcdef',
      size: '1024',
      etag: '0123456789abcdef0123456789abcdef',
      uploaded: '1700000000000',
      storageClass: 'Standard',
      httpFields: {},
      customFields: [],
      checksums: { '0': '0123456789abcdef0123456789abcdef' },
    }),
  );
  createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
      res.end(answer);
    });
  }).listen(Number(argument('--noop-server')), '127.0.0.1', () => process.stdout.write('ready\n'));
} else {
  await main();
}

async function main(): Promise<void> {
  const SECONDS = Number(argument('--seconds') ?? 8);
  const ROUNDS = Number(argument('--rounds') ?? 3);
  const FLAGS = argument('--flags') ?? 'stock';
  if (FLAGS !== 'stock' && FLAGS !== 'platform') throw new Error('--flags: stock or platform');
  const work = mkdtempSync(join(tmpdir(), 'ledge-runtime-bounds-'));
  const children: ChildProcess[] = [];
  try {
    const noopPort = await freePort();
    const noop = spawn(process.execPath, [import.meta.filename, '--noop-server', String(noopPort)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(noop);
    await new Promise((resolve) => noop.stdout!.once('data', resolve));
    const ports = { hello: await freePort(), r2_put: await freePort(), fetch_put: await freePort() };
    const workerd = startWorkerd(work, noopPort, ports, FLAGS === 'platform' ? FUNCTION_V8_FLAGS : []);
    children.push(workerd);
    await waitUntilAnswering(ports.hello);
    const targets = Object.keys(ports) as (keyof typeof ports)[];
    const results = Object.fromEntries(
      targets.map((t) => [
        t,
        { rps: [] as number[], p99: [] as number[], workerd: [] as number[], noop: [] as number[] },
      ]),
    );
    const steal: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of targets) {
        const [w0, n0, s0] = [treeCpuMs(workerd.pid!), treeCpuMs(noop.pid!), stealTicks()];
        const result = await runWrk(
          `http://127.0.0.1:${ports[target]}`,
          target === 'hello'
            ? { method: 'GET', path: '/', headers: {} }
            : { method: 'PUT', path: '/', headers: {}, bodyBytes: 1024, keys: 1000 },
          work,
          SECONDS,
        );
        const [w1, n1, s1] = [treeCpuMs(workerd.pid!), treeCpuMs(noop.pid!), stealTicks()];
        const requests = Math.max(1, result.requestsPerSec * SECONDS);
        const entry = results[target]!;
        entry.rps.push(result.requestsPerSec);
        entry.p99.push(result.p99Ms);
        entry.workerd.push((w1 - w0) / requests);
        entry.noop.push((n1 - n0) / requests);
        // /proc/stat counts 100 ticks per second per core.
        steal.push((s1 - s0) / (SECONDS * 100 * cores()));
        if (result.errors > 0 || result.non2xx > 0)
          process.stderr.write(`warning: ${target}: ${result.errors} socket errors, ${result.non2xx} non-2xx\n`);
      }
      process.stderr.write(
        `round ${round + 1}: ${targets.map((t) => `${t} ${results[t]!.rps.at(-1)!.toFixed(0)}`).join(', ')}\n`,
      );
    }
    const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
    process.stdout.write(
      `workerd V8 flags: ${FLAGS} (${FLAGS === 'platform' ? FUNCTION_V8_FLAGS.join(' ') : 'none'})\n`,
    );
    for (const target of targets) {
      const { rps, p99, workerd: w, noop: n } = results[target]!;
      const shares = rps.map((v, round) => v / results['hello']!.rps[round]!);
      process.stdout.write(
        `${target}: ${median(rps).toFixed(0)} req/s (rounds ${rps.map((v) => v.toFixed(0)).join(' ')})` +
          (target === 'hello'
            ? ''
            : `, ${(median(shares) * 100).toFixed(1)}% of the ceiling (rounds ${shares.map((v) => (v * 100).toFixed(1)).join(' ')})`) +
          `; p99 ${median(p99).toFixed(1)} ms; CPU per request: workerd ${median(w).toFixed(3)} ms, no-op server ${median(n).toFixed(3)} ms\n`,
      );
    }
    process.stdout.write(
      `steal (share of the machine's CPU taken by the hypervisor while measuring): median ${(median(steal) * 100).toFixed(1)}%, max ${(Math.max(...steal) * 100).toFixed(1)}%\n`,
    );
  } finally {
    for (const child of children) await stop(child);
    rmSync(work, { recursive: true, force: true });
  }
}

function startWorkerd(
  work: string,
  noopPort: number,
  ports: Record<'hello' | 'r2_put' | 'fetch_put', number>,
  v8Flags: readonly string[],
): ChildProcess {
  const modules: Record<string, string> = {
    'hello.js': HELLO_MODULE,
    'r2-put.js':
      'export default { async fetch(request, env) { const key = new URL(request.url).pathname.slice(1);\n' +
      '  await env.B.put(key, request.body); return new Response(`Put ${key} successfully!`); } };\n',
    'fetch-put.js':
      'export default { async fetch(request, env) { const key = new URL(request.url).pathname.slice(1);\n' +
      "  const answer = await env.S.fetch('http://r2/' + key, { method: 'PUT', body: request.body });\n" +
      '  await answer.arrayBuffer(); return new Response(`Put ${key} successfully!`); } };\n',
  };
  for (const [name, source] of Object.entries(modules)) writeFileSync(join(work, name), source);
  const worker = (module: string, bindings = '') =>
    `worker = (modules = [(name = "${module}", esModule = embed "${module}")], compatibilityDate = "2025-01-01"${bindings})`;
  writeFileSync(
    join(work, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";\nconst config :Workerd.Config = (\n  services = [\n` +
      `    (name = "hello", ${worker('hello.js')}),\n` +
      `    (name = "r2_put", ${worker('r2-put.js', ', bindings = [(name = "B", r2Bucket = "noop")]')}),\n` +
      `    (name = "fetch_put", ${worker('fetch-put.js', ', bindings = [(name = "S", service = "noop")]')}),\n` +
      `    (name = "noop", external = (address = "127.0.0.1:${noopPort}", http = ())),\n  ],\n  sockets = [\n` +
      Object.entries(ports)
        .map(
          ([name, port]) => `    (name = "${name}", address = "127.0.0.1:${port}", http = (), service = "${name}"),\n`,
        )
        .join('') +
      `  ],\n  v8Flags = [${v8Flags.map((flag) => JSON.stringify(flag)).join(', ')}],\n);\n`,
  );
  return spawn(workerdBinary(), ['serve', join(work, 'config.capnp')], { stdio: 'ignore' });
}

async function waitUntilAnswering(port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (
    !(await fetch(`http://127.0.0.1:${port}/`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline) throw new Error('workerd did not answer');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The machine's steal ticks so far (/proc/stat, first line, 8th value). */
function stealTicks(): number {
  return Number(readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/)[8]);
}

function cores(): number {
  return readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((line) => /^cpu\d/.test(line)).length;
}
