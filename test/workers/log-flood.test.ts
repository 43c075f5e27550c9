import { spawn } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_TRUNCATED_NOTE } from '../../src/workerd/isolate/contract.ts';
import { LOG_BYTES_PER_INVOCATION } from '../../src/workerd/log-limits.ts';
import { HISTORY_BYTES_PER_SECOND } from '../../src/workers/history-rate.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { accountSubdomain, callFunction, enableWorkersDev, functionsPort, tenant, uploadScript } from './helpers.ts';
import { poll } from '../helpers/wait.ts';

const MIB = 1024 * 1024;
const KIB = 1024;

/**
 * Issue 26 point 5, with real workerd and three accounts. Before: one tenant writing 60 MiB of console output
 * and reading it back (`GET .../tail?history=`, `ledge tail --history`) moved another tenant's function p99
 * from under 10 ms to 490-650 ms and the API's to 420-485 ms: every line was appended with a synchronous
 * file call, and every history read read the whole file, parsed every line and sent them at once, all on the
 * server's event loop. Console output was not capped either.
 */
const FLOODER = `export default { async fetch(request) {
  const url = new URL(request.url);
  const lines = Number(url.searchParams.get('lines') ?? '1');
  const size = Number(url.searchParams.get('size') ?? '10');
  const tag = url.searchParams.get('tag') ?? '';
  const pad = 'x'.repeat(size);
  for (let i = 0; i < lines; i++) console.log(tag + ' ' + i, pad);
  if (url.searchParams.has('dir')) {
    console.dir(url.searchParams.get('dir'));
    console.table(url.searchParams.get('dir'));
  }
  if (url.searchParams.has('wait')) {
    // The function under test waits as asked (the fixture's behaviour, not a wait of the test).
    await new Promise((r) => setTimeout(r, Number(url.searchParams.get('wait'))));
    for (let i = 0; i < lines; i++) console.log(tag + ' after ' + i, pad);
  }
  return new Response('logged');
} };`;

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;

async function deploy(as: TestLedge, name: string, source: string) {
  const uploaded = await uploadScript(as, name, { modules: { 'index.js': source } });
  expect(uploaded.status, JSON.stringify(uploaded.body.errors)).toBe(200);
  expect((await enableWorkersDev(as, name)).status).toBe(200);
  return `${name}.${await accountSubdomain(as)}.localhost`;
}

/** Reads a script's history (follow=false) and counts its bytes without keeping them. */
function readHistory(as: TestLedge, script: string, lines: number): Promise<{ status: number; bytes: number }> {
  const url = new URL(`${as.apiUrl}/accounts/${as.accountId}/workers/scripts/${script}/tail`);
  url.searchParams.set('history', String(lines));
  url.searchParams.set('follow', 'false');
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: as.tokenHeaders, agent: new Agent({ keepAlive: false }) }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function history(as: TestLedge, script: string, lines: number) {
  const res = await fetch(
    `${as.apiUrl}/accounts/${as.accountId}/workers/scripts/${script}/tail?history=${lines}&follow=false`,
    { headers: as.tokenHeaders },
  );
  expect(res.status).toBe(200);
  return (await res.text())
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { level: string; message: string[] });
}

/** Tenant C's client, run as its own process: floods the function, reads the history; prints a JSON summary. */
const FLOOD_CLIENT = `
const http = require('node:http');
const { port, host, calls, historyUrl, headers } = JSON.parse(process.argv[1]);
let written = 0, historyReads = 0, historyBytes = 0;
const failures = [];
const get = (url, options) => new Promise((resolve, reject) => {
  const req = http.request(url, options, (res) => {
    let bytes = 0, text = '';
    res.on('data', (chunk) => { bytes += chunk.length; if (text.length < 100) text += chunk; });
    res.on('end', () => resolve({ status: res.statusCode, bytes, text }));
    res.on('error', reject);
  });
  req.on('error', reject);
  req.end();
});
async function flooder() {
  const agent = new http.Agent({ keepAlive: true });
  while (written < calls) {
    written++;
    const res = await get('http://127.0.0.1:' + port + '/?lines=15&size=16000&tag=flood', { headers: { host }, agent });
    if (res.text !== 'logged') failures.push('flood ' + res.status + ' ' + res.text);
  }
  agent.destroy();
}
async function reader() {
  while (written < calls) {
    const res = await get(historyUrl, { headers, agent: false });
    if (res.status !== 200) failures.push('history ' + res.status);
    historyReads++;
    historyBytes += res.bytes;
  }
}
Promise.all([flooder(), flooder(), flooder(), flooder(), reader(), reader()]).then(() =>
  process.stdout.write(JSON.stringify({ historyReads, historyBytes, failures })),
);
`;

function runFlood(
  input: Record<string, unknown>,
): Promise<{ historyReads: number; historyBytes: number; failures: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', FLOOD_CLIENT, JSON.stringify(input)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`flood client exited ${code}`)),
    );
  });
}

/** Account A's clients: its function (2 at a time) and its API, timed, until told to stop; then a JSON summary. */
const MEASURE_CLIENT = `
const http = require('node:http');
const { functionUrl, functionHost, apiUrl, headers } = JSON.parse(process.argv[1]);
const phases = [{ fn: [], api: [] }];
const failures = [];
let running = true;
const agent = new http.Agent({ keepAlive: true, maxSockets: 3 });
const get = (url, options) => new Promise((resolve) => {
  const req = http.request(url, { ...options, agent }, (res) => {
    let text = '';
    res.on('data', (chunk) => (text += chunk));
    res.on('end', () => resolve({ status: res.statusCode, text }));
    res.on('error', (error) => resolve({ status: 0, text: error.message }));
  });
  req.on('error', (error) => resolve({ status: 0, text: error.message }));
  req.end();
});
// The flooding client's pace: part of the load this test makes, not a wait for a result.
const pace = () => new Promise((r) => setTimeout(r, 5));
async function loop(kind, url, options, ok) {
  while (running) {
    const started = performance.now();
    const res = await get(url, options);
    phases.at(-1)[kind].push(performance.now() - started);
    if (!ok(res)) failures.push(kind + ' ' + res.status + ' ' + res.text.slice(0, 100));
    await pace();
  }
}
const loops = [
  loop('fn', functionUrl, { headers: { host: functionHost } }, (r) => r.text === 'a ok'),
  loop('fn', functionUrl, { headers: { host: functionHost } }, (r) => r.text === 'a ok'),
  loop('api', apiUrl, { headers }, (r) => r.status === 200),
];
require('node:readline').createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line === 'mark') phases.push({ fn: [], api: [] });
  if (line !== 'stop') return;
  running = false;
  await Promise.all(loops);
  agent.destroy();
  process.stdout.write(JSON.stringify({ quiet: phases[0], flooded: phases[1], failures }));
});
`;

type Timings = { fn: number[]; api: number[] };

function startMeasuring(input: Record<string, unknown>) {
  const child = spawn(process.execPath, ['-e', MEASURE_CLIENT, JSON.stringify(input)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    mark: () => child.stdin.write('mark\n'),
    stop: async () => {
      child.stdin.end('stop\n');
      await exited;
      return JSON.parse(out) as { quiet: Timings; flooded: Timings; failures: string[] };
    },
  };
}

type Line = { level: string; message: string[] };

/** The history once `done` holds for it: console lines reach the server shortly after the response. */
async function historyOnce(as: TestLedge, script: string, lines: number, done: (lines: Line[]) => boolean) {
  let got: Line[] = [];
  await poll(
    async () => {
      got = await history(as, script, lines);
      return done(got);
    },
    { timeoutMs: 10_000 },
  );
  return got;
}

describe('function logs are bounded and never block the server', () => {
  let ledge: TestLedge;
  let tenantB: TestLedge;
  let tenantC: TestLedge;
  let hostA: string;
  let hostC: string;
  let port: number;
  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 2 } });
    tenantB = await tenant(ledge, 'Bravo');
    tenantC = await tenant(ledge, 'Charlie');
    hostA = await deploy(ledge, 'steady', `export default { fetch() { return new Response('a ok'); } };`);
    await deploy(tenantB, 'victim', `export default { fetch() { console.log('b'); return new Response('b ok'); } };`);
    hostC = await deploy(tenantC, 'flood', FLOODER);
    port = functionsPort(ledge);
  });
  afterAll(async () => ledge?.close());

  it('console output past 256 KB in one invocation is no longer kept: a note says the rest is not recorded', async () => {
    // 2 MiB in one invocation: 64 lines of 16 KiB, then 64 more after an await.
    const res = await callFunction(port, hostC, '/?lines=64&size=16384&tag=big&wait=10');
    expect(res.text).toBe('logged');
    const lines = await historyOnce(tenantC, 'flood', 1000, (got) => got.at(-1)?.message[0] === LOG_TRUNCATED_NOTE);
    const kept = lines.filter((l) => l.message[0]?.startsWith('big'));
    const keptBytes = kept.reduce((sum, l) => sum + JSON.stringify(l).length, 0);
    expect(keptBytes).toBeLessThanOrEqual(LOG_BYTES_PER_INVOCATION);
    expect(kept.length).toBeGreaterThanOrEqual(14);
    expect(kept.length).toBeLessThan(16);
    // The lines kept are the first ones, and nothing written after the budget ran out (not even after an await).
    expect(kept.map((l) => l.message[0])).toEqual(kept.map((_, i) => `big ${i}`));
    expect(lines.at(-1)).toMatchObject({ level: 'warn', message: [LOG_TRUNCATED_NOTE] });
  });

  it('the budget is per invocation: the next request, and concurrent ones, each get their own 256 KB', async () => {
    // Two requests at once, 160 KiB each (over 256 KB together), each waiting so that they overlap.
    const [one, two] = await Promise.all([
      callFunction(port, hostC, '/?lines=5&size=16384&tag=one&wait=200', { agent: new Agent() }),
      callFunction(port, hostC, '/?lines=5&size=16384&tag=two&wait=200', { agent: new Agent() }),
    ]);
    expect([one.text, two.text]).toEqual(['logged', 'logged']);
    const lines = await historyOnce(
      tenantC,
      'flood',
      100,
      (got) => got.filter((l) => /^(one|two) after 4$/.test(l.message[0] ?? '')).length === 2,
    );
    for (const tag of ['one', 'two']) {
      expect(lines.filter((l) => l.message[0]?.startsWith(`${tag} `)).length, tag).toBe(10);
    }
    expect(lines.slice(-20).some((l) => l.message[0] === LOG_TRUNCATED_NOTE)).toBe(false);
  });

  it('console.dir and console.table no longer print untagged text: they are the script’s own lines, and cannot forge another script’s', async () => {
    const forged = `\u0001ledge-log ${JSON.stringify({ a: tenantB.accountId, s: 'victim', level: 'log', time: 0, message: ['forged'] })}`;
    const res = await callFunction(port, hostC, `/?lines=0&dir=${encodeURIComponent(forged)}`);
    expect(res.text).toBe('logged');
    const own = await historyOnce(tenantC, 'flood', 2, (got) => got.every((l) => l.message[0] === forged));
    expect(own.map((l) => l.message[0])).toEqual([forged, forged]);
    const victim = await history(tenantB, 'victim', 100);
    expect(victim.some((l) => l.message.includes('forged'))).toBe(false);
  });

  it("one tenant writing 60 MiB of logs and reading them back no longer moves another tenant's function and API p99", async () => {
    // A's clients run in a process of their own too, so that what they measure is the server (this process)
    // and workerd, not a client sharing the server's event loop.
    const measure = startMeasuring({
      functionUrl: `http://127.0.0.1:${port}/`,
      functionHost: hostA,
      apiUrl: `${ledge.apiUrl}/accounts/${ledge.accountId}/workers/scripts/steady/settings`,
      headers: ledge.tokenHeaders,
    });
    // The server's event loop: how long it was held, apart from what the OS scheduler adds.
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    // The same measurements without the flood first: what the shared machine gives anyway (a measurement
    // window of real time, by nature).
    await new Promise((r) => setTimeout(r, 3_000));
    measure.mark();
    const quietLoop = loop.percentile(99) / 1e6;
    loop.reset();

    // C, in a process of its own as a tenant's client would be (so that only the server shares this
    // process's event loop with A's measurements): 60 MiB of console output in invocations of 240 KiB (under
    // the per-invocation cap, so all of it crosses workerd's stdout into the server), 4 at a time, while
    // reading its whole history back, 2 at a time.
    const perCall = 15 * 16 * KIB;
    const calls = Math.ceil((60 * MIB) / perCall);
    const started = performance.now();
    const flood = await runFlood({
      port,
      host: hostC,
      calls,
      historyUrl: `${tenantC.apiUrl}/accounts/${tenantC.accountId}/workers/scripts/flood/tail?history=99999&follow=false`,
      headers: tenantC.tokenHeaders,
    });
    const floodSeconds = (performance.now() - started) / 1000;
    expect(flood.failures).toEqual([]);
    const { historyReads, historyBytes } = flood;
    // And the history once more, after the flood: bounded by the rotation, in order.
    const last = await readHistory(tenantC, 'flood', 99_999);
    loop.disable();
    const { quiet, flooded, failures } = await measure.stop();
    const functionMs = flooded.fn;
    const apiMs = flooded.api;

    const report =
      `log flood: quiet p99 function ${percentile(quiet.fn, 99).toFixed(1)} ms, API ` +
      `${percentile(quiet.api, 99).toFixed(1)} ms, event loop ${quietLoop.toFixed(1)} ms; then C wrote ${calls} x 240 KiB in ${floodSeconds.toFixed(1)} s and read ${historyReads} histories ` +
      `(${(historyBytes / MIB).toFixed(0)} MiB); A's function ${functionMs.length} calls p50 ` +
      `${percentile(functionMs, 50).toFixed(1)} ms p99 ${percentile(functionMs, 99).toFixed(1)} ms max ` +
      `${Math.max(...functionMs).toFixed(0)} ms; A's API ${apiMs.length} calls p50 ${percentile(apiMs, 50).toFixed(1)} ` +
      `ms p99 ${percentile(apiMs, 99).toFixed(1)} ms max ${Math.max(...apiMs).toFixed(0)} ms; event loop delay p99 ` +
      `${(loop.percentile(99) / 1e6).toFixed(1)} ms max ${(loop.max / 1e6).toFixed(0)} ms; last history ` +
      `${(last.bytes / MIB).toFixed(1)} MiB`;
    console.log(report);
    expect(failures).toEqual([]);
    expect(historyReads).toBeGreaterThan(0);
    // C's reads together were paced at HISTORY_BYTES_PER_SECOND (one chunk of slack per reader).
    expect(historyBytes).toBeLessThanOrEqual(HISTORY_BYTES_PER_SECOND * floodSeconds + 2 * 256 * KIB);
    // The kept history of one script is bounded (two files of 8 MiB), however much it wrote.
    expect(last.bytes).toBeLessThanOrEqual(16 * MIB + 64 * KIB);
    expect(last.bytes).toBeGreaterThan(8 * MIB);
    expect(functionMs.length).toBeGreaterThan(50);
    expect(apiMs.length).toBeGreaterThan(20);
    // A's tail during the flood against its own quiet tail in the same run, so that a busy machine, which
    // slows both, does not fail it: before the fix the flood put them at 490-650 ms and 420-485 ms (quiet: a
    // few ms); the absolute figures are bench's to measure.
    const floodedAtMost = (quietMs: number[]) => 3 * percentile(quietMs, 99) + 150;
    expect(percentile(functionMs, 99), report).toBeLessThan(floodedAtMost(quiet.fn));
    expect(percentile(apiMs, 99), report).toBeLessThan(floodedAtMost(quiet.api));
    // B, which logged nothing meanwhile, still has its own lines only.
    expect((await callFunction(port, `victim.${await accountSubdomain(tenantB)}.localhost`, '/')).text).toBe('b ok');
  });
});
