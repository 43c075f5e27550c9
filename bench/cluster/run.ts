// Benchmark: one Ledge node against three, on one PostgreSQL 15 and one S3-compatible store (Debian's Swift
// with s3api), on this machine, in one run. The load is the spec's tutorial function through its R2 binding
// (GET 1 KiB, PUT 1 KiB, GET 1 MiB), driven by three wrk processes of 11 connections each: all three against
// node 1 for "1 node", one per node for "3 nodes", so the client side costs the same in both. Alongside the
// throughput it reports what each request cost PostgreSQL (transactions and rows read per request, from
// pg_stat_database) and the CPU of every process involved per request.
// Usage: node bench/cluster/run.ts [--seconds 10] [--rounds 2] [--only get_1k,put_1k,get_1m]
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import postgres from 'postgres';
import { createTestDatabase, startPostgresServer } from '../../test/helpers/postgres-server.ts';
import { startS3Server } from '../../test/helpers/s3-server.ts';
import { EPHEMERAL_PORT_FLAGS } from '../../test/helpers/server-ports.ts';
import { treeCpuMs } from '../functions/processes.ts';
import { runWrk, type WrkResult } from '../functions/wrk.ts';
import { deployTutorial } from '../functions/tutorial.ts';
import { listArgument, numberArgument } from '../arguments.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const SECRET = 'bench-secret';
const SECONDS = numberArgument('--seconds', 10);
const ROUNDS = numberArgument('--rounds', 2);
const ONLY = listArgument('--only');
const CREDS = {
  email: 'bench@example.com',
  key: '0123456789abcdef0123456789abcdef01234',
  account: '0123456789abcdef0123456789abcdef',
};
const CONNECTIONS_PER_WRK = 11;

interface Node {
  name: string;
  child: ChildProcess;
  apiPort: number;
  functionsPort: number;
}

interface Scenario {
  name: string;
  method: 'GET' | 'PUT';
  object?: Buffer;
  bodyBytes?: number;
}

const SCENARIOS: Scenario[] = [
  { name: 'get_1k', method: 'GET', object: randomBytes(1024) },
  { name: 'put_1k', method: 'PUT', bodyBytes: 1024 },
  { name: 'get_1m', method: 'GET', object: randomBytes(2 ** 20) },
].filter((s) => ONLY === undefined || ONLY.includes(s.name)) as Scenario[];

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'ledge-bench-cluster-'));
  const pg = await startPostgresServer();
  const s3 = await startS3Server();
  const database = await createTestDatabase(pg.adminUrl);
  const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LEDGE_LOG_LEVEL: 'warn',
    LEDGE_DATABASE_URL: database.url,
    LEDGE_SECRET_KEY: randomBytes(32).toString('base64'),
    LEDGE_S3_ENDPOINT: s3.endpoint,
    LEDGE_S3_REGION: s3.region,
    LEDGE_S3_BUCKET: 'bench',
    LEDGE_S3_ACCESS_KEY_ID: s3.accessKeyId,
    LEDGE_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    LEDGE_S3_FORCE_PATH_STYLE: 'true',
    LEDGE_BOOTSTRAP_EMAIL: CREDS.email,
    LEDGE_BOOTSTRAP_API_KEY: CREDS.key,
    LEDGE_BOOTSTRAP_ACCOUNT_ID: CREDS.account,
  };
  const nodes: Node[] = [];
  const rows: string[] = [];
  try {
    nodes.push(await startNode(work, 'node-1', env));
    const host = await deployTutorial(nodes[0]!.apiPort, CREDS, SECRET);
    const ledgePids = () => nodes.map((n) => n.child.pid!);
    for (const scenario of SCENARIOS) {
      if (scenario.object) await send(nodes[0]!, host, 'PUT', '/cat-pic.jpg', scenario.object, true);
      const figures: Record<
        string,
        Array<{ rps: number; p99: number; xact: number; rows: number; cpu: number; busy: number }>
      > = {
        '1': [],
        '3': [],
      };
      for (let round = 0; round < ROUNDS; round++) {
        for (const count of round % 2 === 0 ? [1, 3] : [3, 1]) {
          await scale(nodes, count, work, env);
          const targets = count === 1 ? [nodes[0]!, nodes[0]!, nodes[0]!] : nodes.slice(0, 3);
          for (const node of targets) await waitServed(node, host);
          const before = await pgCounters(sql);
          const cpuBefore = ledgePids().reduce((sum, pid) => sum + treeCpuMs(pid), 0);
          const machineBefore = machineCpuMs();
          const results = await Promise.all(targets.map((node) => runLoad(node, host, scenario, work)));
          const cpuAfter = ledgePids().reduce((sum, pid) => sum + treeCpuMs(pid), 0);
          const machineAfter = machineCpuMs();
          const after = await pgCounters(sql);
          const rps = results.reduce((sum, r) => sum + r.requestsPerSec, 0);
          const requests = rps * SECONDS;
          const errors = results.reduce((sum, r) => sum + r.errors + r.non2xx, 0);
          const sample = {
            rps,
            p99: Math.max(...results.map((r) => r.p99Ms)),
            xact: (after.xact - before.xact) / requests,
            rows: (after.rows - before.rows) / requests,
            cpu: (cpuAfter - cpuBefore) / requests,
            busy: (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total),
          };
          figures[String(count)]!.push(sample);
          process.stderr.write(
            `${scenario.name} ${count} node(s): ${rps.toFixed(0)} req/s, p99 ${sample.p99.toFixed(1)} ms, ` +
              `${sample.xact.toFixed(2)} PG transactions/req, ${sample.rows.toFixed(1)} rows read/req, ` +
              `Ledge CPU ${sample.cpu.toFixed(2)} ms/req, machine ${(sample.busy * 100).toFixed(0)}% busy, errors ${errors}\n`,
          );
        }
      }
      const one = median(figures['1']!.map((f) => f.rps));
      const three = median(figures['3']!.map((f) => f.rps));
      const at = (count: string, key: 'p99' | 'xact' | 'rows' | 'cpu' | 'busy') =>
        median(figures[count]!.map((f) => f[key]));
      rows.push(
        `| ${scenario.name} | ${one.toFixed(0)} | ${three.toFixed(0)} | ${(three / one).toFixed(2)} | ` +
          `${at('1', 'p99').toFixed(1)} / ${at('3', 'p99').toFixed(1)} | ${at('1', 'xact').toFixed(2)} / ${at('3', 'xact').toFixed(2)} | ` +
          `${at('1', 'rows').toFixed(1)} / ${at('3', 'rows').toFixed(1)} | ${at('1', 'cpu').toFixed(2)} / ${at('3', 'cpu').toFixed(2)} | ` +
          `${(at('1', 'busy') * 100).toFixed(0)}% / ${(at('3', 'busy') * 100).toFixed(0)}% |`,
      );
    }
    console.log(
      `\nLedge, 1 node vs 3 nodes on one PostgreSQL 15 + Swift s3api (${SECONDS} s x ${ROUNDS} rounds, 3 x wrk -c${CONNECTIONS_PER_WRK}, medians)\n`,
    );
    console.log(
      '| scenario | 1 node req/s | 3 nodes req/s | ratio | p99 ms (1 / 3) | PG xact/req (1 / 3) | PG rows read/req (1 / 3) | Ledge CPU ms/req (1 / 3) | machine busy (1 / 3) |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
  } finally {
    await Promise.all(nodes.map((node) => stopChild(node.child)));
    await sql.end();
    await database.drop();
    await s3.stop();
    await pg.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** Runs `count` nodes: starts the missing ones, stops those beyond it (SIGTERM, as an operator would). */
async function scale(nodes: Node[], count: number, work: string, env: NodeJS.ProcessEnv): Promise<void> {
  while (nodes.length > count) await stopChild(nodes.pop()!.child);
  while (nodes.length < count) nodes.push(await startNode(work, `node-${nodes.length + 1}`, env));
}

async function startNode(work: string, name: string, env: NodeJS.ProcessEnv): Promise<Node> {
  const child = spawn(
    join(ROOT, 'bin/ledge'),
    ['server', '--json', '--data-dir', join(work, name), ...EPHEMERAL_PORT_FLAGS],
    { env: { ...env, LEDGE_NODE_ID: name }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolveLine, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolveLine);
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before ready`)));
  });
  child.stdout!.resume();
  const info = JSON.parse(line) as { api_url: string; functions_port: number };
  return { name, child, apiPort: Number(new URL(info.api_url).port), functionsPort: info.functions_port };
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
}

function send(node: Node, host: string, method: string, path: string, body?: Buffer, auth = false): Promise<number> {
  return new Promise((done, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: node.functionsPort,
        method,
        path,
        headers: { host, ...(auth ? { 'X-Custom-Auth-Key': SECRET } : {}) },
        agent: false,
      },
      (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A node just started serves the deployment once its workerd is up. */
async function waitServed(node: Node, host: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if ((await send(node, host, 'GET', '/cat-pic.jpg').catch(() => 0)) === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${node.name} does not serve the function`);
}

function runLoad(node: Node, host: string, scenario: Scenario, work: string): Promise<WrkResult> {
  return runWrk(
    `http://127.0.0.1:${node.functionsPort}`,
    {
      method: scenario.method,
      path: scenario.method === 'GET' ? '/cat-pic.jpg' : '/',
      headers: scenario.method === 'PUT' ? { Host: host, 'X-Custom-Auth-Key': SECRET } : { Host: host },
      ...(scenario.bodyBytes !== undefined ? { bodyBytes: scenario.bodyBytes, keys: 1000 } : {}),
    },
    work,
    SECONDS,
    CONNECTIONS_PER_WRK,
  );
}

async function pgCounters(sql: ReturnType<typeof postgres>): Promise<{ xact: number; rows: number }> {
  const [row] = await sql<[{ xact: string; rows: string }]>`
    SELECT xact_commit + xact_rollback AS xact, tup_returned + tup_fetched AS rows
    FROM pg_stat_database WHERE datname = current_database()`;
  return { xact: Number(row.xact), rows: Number(row.rows) };
}

/** Busy and total CPU time of the whole machine (ms), from /proc/stat: PostgreSQL, Swift and wrk included. */
function machineCpuMs(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  const total = fields.reduce((sum, n) => sum + n, 0);
  return { busy: (total - idle) * 10, total: total * 10 };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

await main();
