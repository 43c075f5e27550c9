// Benchmark: the server's own share of a binding PUT, without workerd (issue 31, issue 27 point 6). Two builds
// (`--base <checkout>` and this one) each run a server (SQLite, through the checkout's test helper) in a child
// process; a load child sends the R2 binding's PUTs straight to each one's unix socket, as workerd does (the
// per-boot secret and the bucket identity injected as workerd would), over 32 keep-alive connections, in
// alternating rounds. Prints the server's CPU per PUT (Node only: workerd sits idle), req/s and the per-round ratio.
// workerd's CPU and the HTTP front are left out, so a Node-side change shows without their noise.
// Usage: node bench/functions/wire-put.ts --base /tmp/ledge-base [--seconds 5 --rounds 5 --bytes 1024]
import { spawn, type ChildProcess } from 'node:child_process';
import { request, Agent } from 'node:http';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { stop, treeCpuMs, workerdCpuMs } from './processes.ts';
// Types only: each server child imports these modules from the checkout it measures.
import type * as LedgeHelpers from '../../test/helpers/ledge.ts';
import type * as R2Module from '../../src/r2/index.ts';

const argument = (name: string) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
/** The load child: `--load <socket> <secret> <bucket> <seconds> <bytes>` prints the PUTs it completed. */
async function load(socketPath: string, secret: string, bucket: string, seconds: number, bytes: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const value = Buffer.alloc(bytes, 'x');
  const deadline = Date.now() + seconds * 1000;
  let done = 0;
  let failed = 0;
  let i = 0;
  const one = () =>
    new Promise<void>((resolvePut) => {
      const metadata = Buffer.from(JSON.stringify({ version: 1, method: 'put', object: `bench-${i++ % 1000}` }));
      const req = request(
        {
          socketPath,
          agent,
          method: 'PUT',
          path: '/',
          headers: {
            'x-ledge-r2-secret': secret,
            'x-ledge-r2-bucket': bucket,
            'cf-r2-metadata-size': metadata.length,
            'content-length': metadata.length + value.length,
          },
        },
        (res) => {
          if (res.statusCode === 200) done++;
          else failed++;
          res.resume();
          res.on('end', () => resolvePut());
        },
      );
      req.on('error', () => {
        failed++;
        resolvePut();
      });
      req.end(Buffer.concat([metadata, value]));
    });
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (Date.now() < deadline) await one();
    }),
  );
  process.stdout.write(`${JSON.stringify({ done, failed })}\n`);
  agent.destroy();
}

interface Server {
  child: ChildProcess;
  socket: string;
  secret: string;
  bucket: string;
}

/** The server child: `--serve <checkout>` starts that build's server (its test helper) and prints where to PUT. */
async function serve(root: string) {
  const { startLedge } = (await import(join(root, 'test/helpers/ledge.ts'))) as typeof LedgeHelpers;
  const { SECRET_HEADER } = (await import(join(root, 'src/r2/index.ts'))) as typeof R2Module;
  const ledge = await startLedge();
  await ledge.server.platform.storage.buckets.create(ledge.accountId, { name: 'bench' });
  const service = ledge.server.platform.r2Backend.workerdService(ledge.accountId, 'bench');
  process.stdout.write(
    `${JSON.stringify({
      socket: service.address.replace(/^unix:/, ''),
      secret: service.injectRequestHeaders.find((h) => h.name === SECRET_HEADER)!.value,
      bucket: `${ledge.accountId}/bench`,
    })}\n`,
  );
  process.once('SIGTERM', () => void ledge.close().then(() => process.exit(0)));
}

async function startServer(root: string): Promise<Server> {
  // WIRE_PUT_PROFILE=<dir>: the servers write CPU profiles there (Node refuses --cpu-prof in NODE_OPTIONS).
  const profile = process.env['WIRE_PUT_PROFILE'];
  const flags = profile ? ['--cpu-prof', '--cpu-prof-interval', '200', '--cpu-prof-dir', profile] : [];
  const child = spawn(process.execPath, [...flags, import.meta.filename, '--serve', root], {
    env: { ...process.env, LEDGE_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((r) => createInterface({ input: child.stdout! }).once('line', r));
  return { child, ...(JSON.parse(line) as Omit<Server, 'child'>) };
}

async function round(server: Server, seconds: number, bytes: number) {
  const pid = server.child.pid!;
  const [tree0, workerd0] = [treeCpuMs(pid), workerdCpuMs(pid)];
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [import.meta.filename, '--load', server.socket, server.secret, server.bucket, String(seconds), String(bytes)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((r) => createInterface({ input: child.stdout! }).once('line', r));
  await new Promise((r) => child.once('exit', r));
  const [tree1, workerd1] = [treeCpuMs(pid), workerdCpuMs(pid)];
  const { done, failed } = JSON.parse(line) as { done: number; failed: number };
  if (failed > 0) process.stderr.write(`warning: ${failed} PUTs failed\n`);
  return {
    rps: done / ((Date.now() - started) / 1000),
    cpuMs: (tree1 - tree0 - (workerd1 - workerd0)) / Math.max(1, done),
  };
}

async function main() {
  const base = argument('--base');
  if (!base) throw new Error('--base <dir>: a checkout of the build to compare with');
  const seconds = Number(argument('--seconds') ?? 5);
  const rounds = Number(argument('--rounds') ?? 5);
  const bytes = Number(argument('--bytes') ?? 1024);
  const servers: Server[] = [];
  try {
    servers.push(await startServer(resolve(base)));
    servers.push(await startServer(resolve(import.meta.dirname, '../..')));
    const cpu: number[][] = [[], []];
    const rps: number[][] = [[], []];
    await round(servers[0]!, 2, bytes); // warm both
    await round(servers[1]!, 2, bytes);
    for (let r = 0; r < rounds; r++) {
      // Order rotated per round so neither build always runs second.
      for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) {
        const result = await round(servers[i]!, seconds, bytes);
        cpu[i]!.push(result.cpuMs);
        rps[i]!.push(result.rps);
      }
    }
    const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
    const ratios = cpu[1]!.map((v, r) => v / cpu[0]![r]!);
    for (const [i, name] of ['base', 'head'].entries())
      process.stdout.write(
        `${name}: Node CPU per PUT ${median(cpu[i]!).toFixed(3)} ms (rounds ${cpu[i]!.map((v) => v.toFixed(3)).join(' ')}), ` +
          `${median(rps[i]!).toFixed(0)} req/s\n`,
      );
    process.stdout.write(
      `head/base CPU per PUT, per round: median ${median(ratios).toFixed(3)} (${ratios.map((v) => v.toFixed(3)).join(' ')})\n`,
    );
  } finally {
    for (const s of servers) await stop(s.child);
  }
}

if (process.argv[2] === '--serve') await serve(process.argv[3]!);
else if (process.argv[2] === '--load')
  await load(process.argv[3]!, process.argv[4]!, process.argv[5]!, Number(process.argv[6]), Number(process.argv[7]));
else await main();
