// Benchmark: memory of the S3 data path for one very large object (issue 29, point 6). Starts a `ledge server`,
// `aws s3 cp`s a file of --gib GiB (default 6) up (multipart) and back down, samples the server's RSS (the Node
// process that serves the S3 port; the functions runtime takes no part) every 100 ms, checks the bytes came back
// identical (SHA-256), and reports the growth of the RSS peak over the idle server. Target: under 64 MiB.
// Needs the AWS CLI v2 (Debian's awscli, /usr/bin/aws; else `aws` on PATH) and about 3x --gib of free disk (the file, its blobs, the download); it deletes them after.
// Usage: node bench/s3/large-object-memory.ts [--gib 6]
import { execFile, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { awsCliEnv } from '../../test/helpers/aws-cli.ts';
import { s3CredentialsFor, startLedge } from './server.ts';

const at = process.argv.indexOf('--gib');
const GIB = at >= 0 ? Number(process.argv[at + 1]) || 6 : 6;
const MiB = 1024 * 1024;
const AWS = existsSync('/usr/bin/aws') ? '/usr/bin/aws' : 'aws';
const BLOCK = 64 * MiB;

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? '0') * 1024;
}

/** A file of `bytes` pseudo-random bytes (one random 64 MiB block, each copy with its index stamped in). */
function writeInput(path: string, bytes: number): string {
  const hash = createHash('sha256');
  const block = randomBytes(BLOCK);
  const fd = openSync(path, 'w');
  try {
    for (let written = 0, index = 0; written < bytes; index++) {
      block.writeUInt32BE(index, 0);
      const piece = block.subarray(0, Math.min(BLOCK, bytes - written));
      writeSync(fd, piece);
      hash.update(piece);
      written += piece.length;
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 4 * MiB })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'ledge-s3-memory-'));
  let child: ChildProcess | undefined;
  try {
    const ledge = await startLedge(join(work, 'data'));
    child = ledge.child;
    const pid = child.pid!;
    const credentials = await s3CredentialsFor(ledge.apiUrl);
    const home = join(work, 'aws');
    mkdirSync(home, { recursive: true });
    const env = awsCliEnv(home, credentials);
    const aws = (...args: string[]) =>
      promisify(execFile)(AWS, ['--endpoint-url', `http://127.0.0.1:${ledge.s3Port}`, ...args], {
        env,
        maxBuffer: 16 * MiB,
      });
    await aws('s3', 'mb', 's3://big');

    const input = join(work, 'input.bin');
    const bytes = GIB * 1024 * MiB;
    const inputSha = writeInput(input, bytes);
    // Idle baseline: after start-up and one request, once the collector has settled.
    await new Promise((r) => setTimeout(r, 2000));
    const baseline = rssOf(pid);

    let peak = baseline;
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, rssOf(pid));
      } catch {
        // the server exited: reported by the copy failing
      }
    }, 100);
    const phase = async (name: string, copy: () => Promise<unknown>) => {
      const started = Date.now();
      peak = rssOf(pid);
      await copy();
      const seconds = (Date.now() - started) / 1000;
      const line = `${name}: ${seconds.toFixed(0)} s (${(bytes / MiB / seconds).toFixed(0)} MiB/s), server RSS peak ${(peak / MiB).toFixed(0)} MiB (+${((peak - baseline) / MiB).toFixed(1)} MiB over idle)`;
      process.stdout.write(`${line}\n`);
      return peak;
    };
    const upPeak = await phase('upload (aws s3 cp, multipart 8 MiB parts)', () =>
      aws('s3', 'cp', input, 's3://big/object.bin', '--only-show-errors'),
    );
    const output = join(work, 'output.bin');
    const downPeak = await phase('download (aws s3 cp)', () =>
      aws('s3', 'cp', 's3://big/object.bin', output, '--only-show-errors'),
    );
    clearInterval(sampler);
    rmSync(input, { force: true });
    const outputSha = await sha256File(output);
    rmSync(output, { force: true });
    const growth = Math.max(upPeak, downPeak) - baseline;
    process.stdout.write(
      [
        `object: ${GIB} GiB; bytes identical: ${outputSha === inputSha ? 'yes' : 'NO'} (sha256 ${inputSha.slice(0, 16)}...)`,
        `server RSS idle ${(baseline / MiB).toFixed(0)} MiB; growth of the peak ${(growth / MiB).toFixed(1)} MiB (target < 64 MiB): ${growth < 64 * MiB ? 'met' : 'NOT met'}`,
        `load average at the end: ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')} (${cpus().length} cores)`,
      ].join('\n') + '\n',
    );
    if (outputSha !== inputSha) process.exitCode = 1;
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
