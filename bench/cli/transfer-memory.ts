// Benchmark: the memory of `ledge object put` and `ledge object get` (issue 28 point 3: under 100 MiB for any
// size). Starts a server (bench/s3/server.ts), writes a file of --mib MiB (default 300), puts it and gets it back
// through bin/ledge as a user runs it, and prints the CLI process's peak RSS (VmHWM, sampled from /proc every
// 20 ms) and the rate in MiB/s. Also the peak of `ledge object list` (the CLI with no body to move) and of a put
// with an empty compile cache. The bytes are checked (sha256). Exits 1 when a put or get (compile cache filled, as
// after `npm install`) peaks above the limit (--limit, default 100 MiB).
// Usage: npm run bench:cli [-- --mib 1024 --rounds 3 --limit 100]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { numberArgument } from '../arguments.ts';
import { ACCOUNT, startLedge, TOKEN } from '../s3/server.ts';
import { fileSha256, writeNumberedFile } from '../../test/helpers/big-files.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const LEDGE = join(ROOT, 'bin/ledge');
const MIB = numberArgument('--mib', 300);
const ROUNDS = numberArgument('--rounds', 1);
const LIMIT_MIB = numberArgument('--limit', 100);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  peakMiB: number;
  seconds: number;
}

/** Runs `ledge` (bin/ledge: it execs Node, so the child's PID is the CLI's) and samples its peak RSS. */
function ledge(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((done) => {
    const started = process.hrtime.bigint();
    const child = spawn(LEDGE, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let peakKiB = 0;
    const sample = () => {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
        peakKiB = Math.max(peakKiB, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
      } catch {
        // Exited between samples. VmHWM is the high-water mark, so only growth in its last 20 ms can be missed.
      }
    };
    const timer = setInterval(sample, 20);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => {
      clearInterval(timer);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      done({ code, stdout, stderr, peakMiB: peakKiB / 1024, seconds });
    });
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'ledge-cli-bench-'));
  const { child: server, apiUrl } = await startLedge(join(work, 'data'));
  let failed = false;
  try {
    const env = {
      ...process.env,
      LEDGE_API_URL: apiUrl,
      LEDGE_API_TOKEN: TOKEN,
      LEDGE_ACCOUNT_ID: ACCOUNT,
      LEDGE_CONFIG_DIR: join(work, 'cli-config'),
      NODE_COMPILE_CACHE: join(work, 'compile-cache'),
    };
    const created = await ledge(['bucket', 'create', 'bench'], env);
    if (created.code !== 0) throw new Error(`bucket create: ${created.stderr}`);
    const file = join(work, 'big.bin');
    const sha = await writeNumberedFile(file, MIB);
    console.log(
      `ledge object put/get of ${MIB} MiB, peak RSS of the CLI process (VmHWM), bin/ledge, ${ROUNDS} round(s)`,
    );

    // The compile cache as `npm install` leaves it: its postinstall runs `ledge --help`, which loads every
    // command's modules. Then the CLI moving no body (object list).
    await ledge(['--help'], env);
    const idle = await ledge(['object', 'list', 'bench'], env);
    // For comparison, a put with an empty compile cache (sources edited since, or an unwritable cache): Node
    // loads its TypeScript stripper for the run. Informative; the limit applies to the runs below.
    const cold = await ledge(['object', 'put', 'bench/cold.bin', '--file', file, '--json'], {
      ...env,
      NODE_COMPILE_CACHE: join(work, 'cold-cache'),
    });
    if (cold.code !== 0) throw new Error(`put: ${cold.stderr}`);
    console.log(
      `  ledge object list (no body): ${idle.peakMiB.toFixed(1)} MiB; put with an empty compile cache: ${cold.peakMiB.toFixed(1)} MiB`,
    );

    const puts: Run[] = [];
    const gets: Run[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const put = await ledge(['object', 'put', 'bench/big.bin', '--file', file, '--json'], env);
      if (put.code !== 0) throw new Error(`put: ${put.stderr}`);
      const back = join(work, 'back.bin');
      const get = await ledge(['object', 'get', 'bench/big.bin', '--file', back], env);
      if (get.code !== 0) throw new Error(`get: ${get.stderr}`);
      if ((await fileSha256(back)) !== sha) throw new Error('the object read back differs from the file');
      rmSync(back);
      puts.push(put);
      gets.push(get);
      for (const [name, run] of [
        ['put', put],
        ['get', get],
      ] as const) {
        console.log(
          `  round ${round + 1} ${name}: peak ${run.peakMiB.toFixed(1)} MiB, ${(MIB / run.seconds).toFixed(0)} MiB/s (${run.seconds.toFixed(1)} s)`,
        );
      }
    }
    for (const [name, runs] of [
      ['put', puts],
      ['get', gets],
    ] as const) {
      const worst = Math.max(...runs.map((r) => r.peakMiB));
      const rate = median(runs.map((r) => MIB / r.seconds));
      const verdict = worst <= LIMIT_MIB ? 'ok' : `OVER the ${LIMIT_MIB} MiB limit`;
      console.log(`${name}: highest peak ${worst.toFixed(1)} MiB (${verdict}), median ${rate.toFixed(0)} MiB/s`);
      if (worst > LIMIT_MIB) failed = true;
    }
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('close', r));
    rmSync(work, { recursive: true, force: true });
  }
  process.exitCode = failed ? 1 : 0;
}

await main();
