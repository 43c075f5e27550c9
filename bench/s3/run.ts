// Benchmark: the S3 API's data path. GET and PUT of 1 KiB and 1 MiB objects through the S3 port (SigV4:
// presigned GETs, header-signed PUTs, so every request's signature is checked), side by side in one run
// with the /client/v4 object routes on the same objects, a node:http file-stream ceiling (bench/functions/
// file-server.ts) and, with --swift, OpenStack Swift's s3api (/work/shared/reference/scale-out/start-s3.sh).
// Each figure is `wrk -t1 -c<connections> -d<seconds>s`. Built for a noisy, shared machine: the targets of a
// scenario run interleaved, one after the other, for --rounds rounds, in an order rotated each round (no
// target always first or last); the medians are reported, and the targets' ratios are taken per round (a
// pair measured seconds apart shares the machine's load) and their median reported, with the range. Also the
// cost of one signature check (parse + verify of a presigned GET), in process. Next to req/s, each target's
// serving process's CPU per request (and the ratio of those): the figure that a shared machine disturbs least.
// Needs wrk (and Swift for --swift).
// Usage: npm run bench:s3 [-- --seconds 5 --rounds 5 --only get|put --swift]
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SignatureV4 } from '@smithy/signature-v4';
import { parseSignedRequest, verifySignature } from '../../src/s3/sigv4.ts';
import { freePort } from '../../test/helpers/free-port.ts';
import { treeCpuMs } from '../functions/processes.ts';
import { parseWrk, type WrkResult } from '../functions/wrk.ts';
import { ACCOUNT, s3CredentialsFor, startLedge, TOKEN, waitForLine } from './server.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const argument = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) || fallback : fallback;
};
const textArgument = (name: string) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const SECONDS = argument('--seconds', 5);
const ROUNDS = argument('--rounds', 5);
const ONLY = textArgument('--only');
const SWIFT = process.argv.includes('--swift');
const SIZES = { '1 KiB': 1024, '1 MiB': 1024 * 1024 } as const;

class NodeSha256 {
  readonly #hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    const key = secret === undefined || typeof secret === 'string' ? secret : Buffer.from(secret as ArrayBuffer);
    this.#hash = key === undefined ? createHash('sha256') : createHmac('sha256', key);
  }
  update(data: Uint8Array | string) {
    this.#hash.update(data);
  }
  async digest() {
    return this.#hash.digest();
  }
  reset() {}
}

interface Target {
  name: string;
  url: string;
  method: 'GET' | 'PUT';
  headers: Record<string, string>;
  body?: number;
  /** The serving process, whose CPU per request is measured (none for Swift, several processes). */
  pid?: number | undefined;
}

/** A wrk run, with the CPU (ms) the serving process spent per request during it. */
type Run = WrkResult & { cpuMsPerRequest: number | undefined };

async function wrk(target: Target, dir: string, connections: number): Promise<WrkResult> {
  const lua = join(dir, `t-${Date.now()}-${Math.random().toString(36).slice(2)}.lua`);
  const headers = Object.entries(target.headers)
    .map(([k, v]) => `[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join(', ');
  const url = new URL(target.url);
  const path = `${url.pathname}${url.search}`;
  const body = target.body === undefined ? 'nil' : `string.rep("x", ${target.body})`;
  writeFileSync(
    lua,
    `local h = { ${headers} }\nlocal body = ${body}\n` +
      `request = function() return wrk.format(${JSON.stringify(target.method)}, ${JSON.stringify(path)}, h, body) end\n`,
  );
  const { stdout } = await promisify(execFile)(
    'wrk',
    // --timeout 10s: on a loaded machine Swift's answers take seconds; wrk's default of 2 s counts them as errors.
    [
      '-t1',
      `-c${connections}`,
      `-d${SECONDS}s`,
      '--timeout',
      '10s',
      '--latency',
      '-s',
      lua,
      `${url.protocol}//${url.host}`,
    ],
    { maxBuffer: 1 << 20 },
  );
  return parseWrk(stdout);
}

async function startSwift(work: string): Promise<Record<string, string>> {
  const script = '/work/shared/reference/scale-out/start-s3.sh';
  const { stdout } = await promisify(execFile)('bash', [script, join(work, 'swift-run')], { maxBuffer: 1 << 20 });
  return Object.fromEntries(
    stdout
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => l.split(/=(.*)/s).slice(0, 2)),
  );
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'ledge-s3-bench-'));
  const children: ChildProcess[] = [];
  let swiftStarted = false;
  try {
    const ledge = await startLedge(join(work, 'data'));
    children.push(ledge.child);
    const credentials = await s3CredentialsFor(ledge.apiUrl);
    const endpoint = `http://127.0.0.1:${ledge.s3Port}`;
    const s3 = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials });
    await s3.send(new CreateBucketCommand({ Bucket: 'bench' }));
    const files: Record<string, string> = {};
    for (const [label, size] of Object.entries(SIZES)) {
      const body = Buffer.alloc(size, 7);
      files[label] = join(work, `${size}.bin`);
      writeFileSync(files[label], body);
      await s3.send(new PutObjectCommand({ Bucket: 'bench', Key: `${size}.bin`, Body: body }));
    }
    let swift: { client: S3Client } | undefined;
    if (SWIFT) {
      const env = await startSwift(work);
      swiftStarted = true;
      const client = new S3Client({
        endpoint: env['S3_ENDPOINT'],
        region: env['S3_REGION'] ?? 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: env['S3_ACCESS_KEY_ID']!, secretAccessKey: env['S3_SECRET_ACCESS_KEY']! },
      });
      await client.send(new CreateBucketCommand({ Bucket: 'bench' }));
      for (const size of Object.values(SIZES)) {
        await client.send(new PutObjectCommand({ Bucket: 'bench', Key: `${size}.bin`, Body: Buffer.alloc(size, 7) }));
      }
      swift = { client };
    }

    const signer = new SignatureV4({
      credentials,
      region: 'auto',
      service: 's3',
      sha256: NodeSha256,
      uriEscapePath: false,
      applyChecksum: false,
    });
    const signedPut = async (key: string) => {
      const signed = await signer.sign({
        method: 'PUT',
        protocol: 'http:',
        hostname: '127.0.0.1',
        port: ledge.s3Port,
        path: `/bench/${key}`,
        query: {},
        headers: { host: `127.0.0.1:${ledge.s3Port}`, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
      });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(signed.headers)) if (name !== 'host') headers[name] = String(value);
      return headers;
    };
    const v4 = { authorization: `Bearer ${TOKEN}` };
    const objectsUrl = `${ledge.apiUrl}/accounts/${ACCOUNT}/r2/buckets/bench/objects`;

    const results: { scenario: string; target: string; result: Run; cpuMsPerRequest: number | undefined }[] = [];
    const ratios: { scenario: string; of: string; to: string; values: number[] }[] = [];
    for (const [label, size] of Object.entries(SIZES)) {
      if (ONLY !== 'put') {
        const filePort = await freePort();
        const fileServer = spawn(
          process.execPath,
          [join(ROOT, 'bench/functions/file-server.ts'), String(filePort), files[label]!],
          {
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        );
        children.push(fileServer);
        await waitForLine(fileServer, (line) => line === 'ready');
        const targets: Target[] = [
          {
            name: 'S3 API (presigned)',
            method: 'GET',
            headers: {},
            pid: ledge.child.pid,
            url: await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'bench', Key: `${size}.bin` }), {
              expiresIn: 3600,
            }),
          },
          {
            name: '/client/v4 objects',
            method: 'GET',
            headers: v4,
            url: `${objectsUrl}/${size}.bin`,
            pid: ledge.child.pid,
          },
          {
            name: 'node:http file stream',
            method: 'GET',
            headers: {},
            url: `http://127.0.0.1:${filePort}/`,
            pid: fileServer.pid,
          },
        ];
        if (swift) {
          targets.push({
            name: 'Swift s3api (presigned)',
            method: 'GET',
            headers: {},
            url: await getSignedUrl(swift.client, new GetObjectCommand({ Bucket: 'bench', Key: `${size}.bin` }), {
              expiresIn: 3600,
            }),
          });
        }
        await measure(`GET ${label}`, targets, size > 1024 ? 16 : 32);
        fileServer.kill('SIGTERM');
      }
      if (ONLY !== 'get') {
        const targets: Target[] = [
          {
            name: 'S3 API (signed)',
            method: 'PUT',
            pid: ledge.child.pid,
            headers: await signedPut(`put-${size}`),
            url: `${endpoint}/bench/put-${size}`,
            body: size,
          },
          {
            name: '/client/v4 objects',
            method: 'PUT',
            headers: v4,
            url: `${objectsUrl}/put-v4-${size}`,
            body: size,
            pid: ledge.child.pid,
          },
        ];
        await measure(`PUT ${label}`, targets, size > 1024 ? 8 : 32);
      }
    }

    async function measure(scenario: string, targets: Target[], connections: number) {
      const runs = new Map<string, Run[]>();
      for (let round = 0; round < ROUNDS; round++) {
        const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
        for (const target of order) {
          // CPU per request hardly moves with the machine's load (bench/functions/processes.ts), unlike req/s.
          const cpuBefore = target.pid === undefined ? 0 : treeCpuMs(target.pid);
          const measured = await wrk(target, work, connections);
          const requests = measured.requestsPerSec * SECONDS;
          const result: Run = {
            ...measured,
            cpuMsPerRequest: target.pid === undefined ? undefined : (treeCpuMs(target.pid) - cpuBefore) / requests,
          };
          // A refused request is a fault; a few socket errors (timeouts) on a loaded machine are not.
          if (result.non2xx > 0 || result.errors > Math.max(2, result.requestsPerSec * SECONDS * 0.01)) {
            throw new Error(
              `${scenario} ${target.name}: ${result.errors} socket errors, ${result.non2xx} non-2xx answers`,
            );
          }
          runs.set(target.name, [...(runs.get(target.name) ?? []), result]);
        }
      }
      for (const [target, list] of runs) {
        const sorted = [...list].sort((a, b) => a.requestsPerSec - b.requestsPerSec);
        const cpu = list.map((r) => r.cpuMsPerRequest).filter((c): c is number => c !== undefined);
        const cpuMsPerRequest = cpu.length ? [...cpu].sort((a, b) => a - b)[Math.floor(cpu.length / 2)] : undefined;
        results.push({ scenario, target, result: sorted[Math.floor(sorted.length / 2)]!, cpuMsPerRequest });
      }
      // The S3 API against each other target, round by round.
      const [first, ...others] = targets;
      for (const other of others) {
        const mine = runs.get(first!.name)!;
        const theirs = runs.get(other.name)!;
        ratios.push({
          scenario,
          of: first!.name,
          to: other.name,
          values: mine.map((r, i) => r.requestsPerSec / theirs[i]!.requestsPerSec),
        });
        // Also as CPU: the other's CPU per request over ours (how many of our requests a core serves per one of
        // theirs), where both are measured.
        if (mine.every((r) => r.cpuMsPerRequest) && theirs.every((r) => r.cpuMsPerRequest)) {
          ratios.push({
            scenario,
            of: `${first!.name} (CPU)`,
            to: other.name,
            values: mine.map((r, i) => theirs[i]!.cpuMsPerRequest! / r.cpuMsPerRequest!),
          });
        }
      }
    }

    // One signature check in process: parse the presigned query and verify it (the per-request work of auth;
    // the access key lookup is cached).
    const presigned = new URL(
      await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'bench', Key: '1024.bin' }), { expiresIn: 3600 }),
    );
    const rawHeaders = ['Host', presigned.host, 'User-Agent', 'wrk', 'Accept', '*/*'];
    const parts = { method: 'GET', rawPath: presigned.pathname, rawQuery: presigned.search.slice(1), rawHeaders };
    const checks = 20_000;
    let ok = 0;
    const started = process.hrtime.bigint();
    const cpuBefore = process.cpuUsage();
    for (let i = 0; i < checks; i++) {
      const signed = parseSignedRequest({ host: presigned.host }, new URLSearchParams(parts.rawQuery), Date.now())!;
      if (verifySignature(parts, signed, credentials.secretAccessKey)) ok++;
    }
    const perCheckUs = Number(process.hrtime.bigint() - started) / 1000 / checks;
    const cpu = process.cpuUsage(cpuBefore);
    const perCheckCpuUs = (cpu.user + cpu.system) / checks;
    if (ok !== checks) throw new Error('the benchmark signature did not verify');

    process.stdout.write(
      `\n| scenario | target | req/s | p50 ms | p99 ms | MiB/s | server CPU ms/request |\n|---|---|---|---|---|---|---|\n`,
    );
    for (const { scenario, target, result, cpuMsPerRequest } of results) {
      process.stdout.write(
        `| ${scenario} | ${target} | ${result.requestsPerSec.toFixed(0)} | ${result.p50Ms.toFixed(2)} | ${result.p99Ms.toFixed(2)} | ${(result.readBytesPerSec / 1024 / 1024).toFixed(1)} | ${cpuMsPerRequest === undefined ? 'n/a' : cpuMsPerRequest.toFixed(3)} |\n`,
      );
    }
    process.stdout.write(`\n| scenario | ratio (per round) | median | min-max |\n|---|---|---|---|\n`);
    for (const { scenario, of, to, values } of ratios) {
      const sorted = [...values].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)]!;
      process.stdout.write(
        `| ${scenario} | ${of} / ${to} | ${median.toFixed(2)} | ${sorted[0]!.toFixed(2)}-${sorted.at(-1)!.toFixed(2)} |\n`,
      );
    }
    process.stdout.write(
      `\nload average at the end: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} (${cpus().length} cores)\n`,
    );
    process.stdout.write(
      `\nsignature check (parse + verify a presigned GET): ${perCheckCpuUs.toFixed(1)} us of CPU per request (${perCheckUs.toFixed(1)} us wall)\n`,
    );
    s3.destroy();
    swift?.client.destroy();
  } finally {
    for (const child of children.reverse()) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
    }
    if (swiftStarted)
      await promisify(execFile)('bash', ['/work/shared/reference/scale-out/stop.sh', join(work, 'swift-run')]).catch(
        () => undefined,
      );
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
