// Memory benchmark of object storage: a 1 GiB PUT and GET streamed through the R2 wire backend (what
// workerd bindings use) and through the /client/v4 object API, while the server's RSS is sampled from
// /proc. Target: RSS growth < 64 MiB.
// Run: npm run bench:storage [-- --size-mib N] [--only wire|api] [--no-warm-up]
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

const MiB = 1024 * 1024;
const sizeArg = process.argv.indexOf('--size-mib');
let SIZE = (sizeArg > 0 ? Number(process.argv[sizeArg + 1]) : 1024) * MiB;
const LIMIT_MIB = 64;
const WARM_UP = !process.argv.includes('--no-warm-up');
const onlyArg = process.argv.indexOf('--only');
const ONLY = onlyArg > 0 ? process.argv[onlyArg + 1] : undefined;

interface ChildInfo {
  apiUrl: string;
  accountId: string;
  token: string;
  wire: { address: string; injectRequestHeaders: { name: string; value: string }[] };
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

/** Samples the server's RSS every 10 ms while `fn` runs; returns the peak. */
async function measure<T>(pid: number, fn: () => Promise<T>): Promise<{ peak: number; result: T; seconds: number }> {
  let peak = rssMiB(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 10);
  const started = performance.now();
  try {
    const result = await fn();
    return { peak: Math.max(peak, rssMiB(pid)), result, seconds: (performance.now() - started) / 1000 };
  } finally {
    clearInterval(timer);
  }
}

/** Deterministic bytes, generated on the fly (the client holds 1 MiB at a time). */
async function* payload(size: number, hash: ReturnType<typeof createHash>) {
  const block = Buffer.alloc(MiB);
  for (let sent = 0, n = 0; sent < size; n++) {
    block.writeUInt32LE(n, 0);
    block.fill(n & 0xff, 4);
    const chunk = block.subarray(0, Math.min(MiB, size - sent));
    hash.update(chunk);
    sent += chunk.length;
    yield Buffer.from(chunk);
  }
}

function wireHeaders(info: ChildInfo): Record<string, string> {
  return Object.fromEntries(info.wire.injectRequestHeaders.map((h) => [h.name, h.value]));
}

async function wirePut(info: ChildInfo, key: string): Promise<{ etag: string; md5: string }> {
  const hash = createHash('md5');
  const metadata = Buffer.from(JSON.stringify({ version: 1, method: 'put', object: key }));
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request({
      socketPath: info.wire.address.replace(/^unix:/, ''),
      method: 'PUT',
      path: '/',
      headers: {
        ...wireHeaders(info),
        'cf-r2-metadata-size': metadata.length,
        'content-length': metadata.length + SIZE,
      },
    });
    req.on('response', resolve);
    req.on('error', reject);
    async function* body() {
      yield metadata;
      yield* payload(SIZE, hash);
    }
    pipeline(Readable.from(body()), req).catch(reject);
  });
  const text = await readAll(response);
  if (response.statusCode !== 200)
    throw new Error(`wire put failed: ${response.statusCode} ${String(response.headers['cf-r2-error'])}`);
  return { etag: (JSON.parse(text) as { etag: string }).etag, md5: hash.digest('hex') };
}

async function wireGet(info: ChildInfo, key: string): Promise<{ md5: string; bytes: number }> {
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const header = Buffer.from(JSON.stringify({ version: 1, method: 'get', object: key })).toString('latin1');
    const req = request({
      socketPath: info.wire.address.replace(/^unix:/, ''),
      method: 'GET',
      path: '/',
      headers: { ...wireHeaders(info), 'cf-r2-request': header },
    });
    req.on('response', resolve);
    req.on('error', reject);
    req.end();
  });
  const metadataSize = Number(response.headers['cf-r2-metadata-size']);
  return digestBody(response, metadataSize);
}

async function apiPut(info: ChildInfo, key: string): Promise<{ etag: string; md5: string }> {
  const hash = createHash('md5');
  const response = await fetch(`${info.apiUrl}/accounts/${info.accountId}/r2/buckets/bench/objects/${key}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${info.token}`, 'content-length': String(SIZE) },
    body: Readable.toWeb(Readable.from(payload(SIZE, hash))) as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  const body = (await response.json()) as { success: boolean; result: { etag: string } };
  if (!body.success) throw new Error(`api put failed: ${JSON.stringify(body)}`);
  return { etag: body.result.etag, md5: hash.digest('hex') };
}

async function apiGet(info: ChildInfo, key: string): Promise<{ md5: string; bytes: number }> {
  const response = await fetch(`${info.apiUrl}/accounts/${info.accountId}/r2/buckets/bench/objects/${key}`, {
    headers: { authorization: `Bearer ${info.token}` },
  });
  return digestBody(Readable.fromWeb(response.body! as NodeReadableStream), 0);
}

async function digestBody(stream: AsyncIterable<Buffer>, skip: number): Promise<{ md5: string; bytes: number }> {
  const hash = createHash('md5');
  let bytes = 0;
  let toSkip = skip;
  for await (const chunk of stream) {
    const data = toSkip > 0 ? chunk.subarray(Math.min(toSkip, chunk.length)) : chunk;
    toSkip = Math.max(0, toSkip - chunk.length);
    hash.update(data);
    bytes += data.length;
  }
  return { md5: hash.digest('hex'), bytes };
}

async function readAll(stream: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ledge-bench-storage-'));
  const child = spawn(process.execPath, [join(import.meta.dirname, 'server-child.ts'), dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, LEDGE_LOG_LEVEL: 'warn' },
  });
  try {
    const line = await new Promise<string>((resolve) =>
      createInterface({ input: child.stdout! }).once('line', resolve),
    );
    const info = JSON.parse(line) as ChildInfo;
    const pid = child.pid!;
    // Warm up every path first (code compiled, pools and caches filled), so the baseline is a server
    // that has served objects before and the growth measured is what the 1 GiB transfer itself costs.
    const cold = rssMiB(pid);
    const fullSize = SIZE;
    SIZE = 16 * MiB;
    if (WARM_UP && ONLY !== 'api') {
      await wirePut(info, 'warm-up');
      await wireGet(info, 'warm-up');
    }
    if (WARM_UP && ONLY !== 'wire') {
      await apiPut(info, 'warm-up-api');
      await apiGet(info, 'warm-up-api');
    }
    SIZE = fullSize;
    await new Promise((r) => setTimeout(r, 1000));
    const baseline = rssMiB(pid);
    const rows: string[] = [];
    let failed = false;
    const record = (name: string, run: { peak: number; seconds: number }, ok: boolean) => {
      const growth = run.peak - baseline;
      if (!ok || growth >= LIMIT_MIB || run.peak - cold >= LIMIT_MIB) failed = true;
      rows.push(
        `| ${name} | ${(SIZE / MiB).toFixed(0)} MiB | ${(SIZE / MiB / run.seconds).toFixed(0)} MiB/s | ${baseline.toFixed(1)} | ${run.peak.toFixed(1)} | ${growth.toFixed(1)} | ${(run.peak - cold).toFixed(1)} | ${ok ? 'ok' : 'MISMATCH'} |`,
      );
    };
    if (ONLY !== 'api') {
      const wp = await measure(pid, () => wirePut(info, 'wire-object'));
      record('wire PUT', wp, wp.result.etag === wp.result.md5);
      const wg = await measure(pid, () => wireGet(info, 'wire-object'));
      record('wire GET', wg, wg.result.md5 === wp.result.md5 && wg.result.bytes === SIZE);
    }
    if (ONLY !== 'wire') {
      const ap = await measure(pid, () => apiPut(info, 'api-object'));
      record('API PUT', ap, ap.result.etag === ap.result.md5);
      const ag = await measure(pid, () => apiGet(info, 'api-object'));
      record('API GET', ag, ag.result.md5 === ap.result.md5 && ag.result.bytes === SIZE);
    }
    process.stdout.write(
      `${new Date().toISOString()} storage memory benchmark (limit: RSS growth < ${LIMIT_MIB} MiB)\n` +
        `server RSS: ${cold.toFixed(1)} MiB idle after start, ${baseline.toFixed(1)} MiB after warm-up (16 MiB through each path)\n` +
        '| transfer | size | throughput | RSS before (MiB) | RSS peak (MiB) | growth (MiB) | growth vs idle start (MiB) | bytes |\n|---|---|---|---|---|---|---|---|\n' +
        `${rows.join('\n')}\n`,
    );
    process.exitCode = failed ? 1 : 0;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
