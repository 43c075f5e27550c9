import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSha256, writeNumberedFile } from '../helpers/big-files.ts';
import { CLI_ENTRY, cleanEnv, cliEnv, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { LEDGE_BIN } from '../helpers/user-shell.ts';

const MiB = 1024 * 1024;

let ledge: TestLedge;
let dir: string;
let big: string;
let bigSha: string;
/** The CLI's own peak RSS on a command that moves no object body: Node 24 and the modules of `ledge object`. */
let baselineMiB: number;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The CLI process's peak resident size (VmHWM), in MiB. */
  peakMiB: number;
}

/**
 * Runs `ledge` as a user does (bin/ledge, which execs Node: the child's PID is the CLI's) and samples its peak RSS
 * from /proc while it runs; `interruptWhen` sends SIGINT on a condition.
 */
function runMeasured(args: string[], interruptWhen?: (stderr: string, elapsedMs: number) => boolean): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(LEDGE_BIN, args, {
      env: { ...cleanEnv(), ...cliEnv(ledge), LEDGE_CONFIG_DIR: tempDir('ledge-cfg-') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started = Date.now();
    let stdout = '';
    let stderr = '';
    let peakKiB = 0;
    let interrupted = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const sample = setInterval(() => {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
        peakKiB = Math.max(peakKiB, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
      } catch {
        // Exited between samples.
      }
      if (interruptWhen && !interrupted && interruptWhen(stderr, Date.now() - started)) {
        interrupted = true;
        child.kill('SIGINT');
      }
    }, 20);
    child.on('close', (code, signal) => {
      clearInterval(sample);
      resolve({ code, signal, stdout, stderr, peakMiB: peakKiB / 1024 });
    });
  });
}

const pendingUploads = async () =>
  Number((await ledge.server.platform.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM r2_uploads', []))!.n);

beforeAll(async () => {
  ledge = await startLedge();
  await ledge.server.platform.storage.buckets.create(ledge.accountId, { name: 'transfers' });
  dir = tempDir('ledge-transfers-');
  big = join(dir, 'big.bin');
  bigSha = await writeNumberedFile(big, 300);
  const idle = await runMeasured(['object', 'list', 'transfers']);
  expect(idle.code, idle.stderr).toBe(0);
  baselineMiB = idle.peakMiB;
});
afterAll(async () => ledge?.close());

describe('ledge object put/get: bounded memory, multipart, progress, Ctrl+C', () => {
  it('uploads and downloads a 300 MiB file in under 100 MiB of memory (under 40 MiB above the CLI itself), byte for byte', async () => {
    const put = await runMeasured(['object', 'put', 'transfers/big.bin', '--file', big, '--json']);
    expect(put.code, put.stderr).toBe(0);
    const stored = JSON.parse(put.stdout) as { size: number; etag: string };
    expect(stored.size).toBe(300 * MiB);
    // Sent in parts: the etag of a multipart object ends with its part count.
    expect(stored.etag).toMatch(/-38$/);
    console.log(
      `ledge object put, 300 MiB: peak RSS ${put.peakMiB.toFixed(1)} MiB (the CLI alone: ${baselineMiB.toFixed(1)} MiB)`,
    );
    // What the transfer adds to the CLI's own memory is a few parts' worth, whatever the file's size (it was
    // 408 MiB in all with one streamed PUT).
    expect(baselineMiB).toBeGreaterThan(10);
    expect(put.peakMiB - baselineMiB).toBeLessThan(40);
    // The bound, for the whole process (the figure of record is bench/cli/transfer-memory.ts's).
    expect(put.peakMiB).toBeLessThan(100);
    // --json: no progress line, even were stderr a terminal.
    expect(put.stderr).toBe('');

    const out = join(dir, 'back.bin');
    const get = await runMeasured(['object', 'get', 'transfers/big.bin', '--file', out]);
    expect(get.code, get.stderr).toBe(0);
    console.log(`ledge object get, 300 MiB: peak RSS ${get.peakMiB.toFixed(1)} MiB`);
    expect(get.peakMiB - baselineMiB).toBeLessThan(40);
    expect(get.peakMiB).toBeLessThan(100);
    expect(statSync(out).size).toBe(300 * MiB);
    expect(await fileSha256(out)).toBe(bigSha);
    expect(existsSync(`${out}.partial`)).toBe(false);
    expect(await pendingUploads()).toBe(0);
  }, 300_000);

  it('a small file goes in one PUT; piped, no progress line is drawn', async () => {
    const small = join(dir, 'small.bin');
    await writeNumberedFile(small, 3);
    const put = await runMeasured(['object', 'put', 'transfers/small.bin', '--file', small]);
    expect(put.code, put.stderr).toBe(0);
    expect(put.stdout).toMatch(/Uploaded transfers\/small\.bin \(3145728 bytes, etag [0-9a-f]{32}\)/);
    expect(put.stderr).toBe('');
  });

  it('shows a progress bar with rate and ETA on a terminal', async () => {
    const medium = join(dir, 'medium.bin');
    await writeNumberedFile(medium, 40);
    // python3's pty (as the reuseport helper): stderr is a terminal, as a person's would be.
    const pty = `import os, pty, sys\npid, fd = pty.fork()\nif pid == 0:\n    os.execv(sys.argv[1], sys.argv[1:])\nout = b''\nwhile True:\n    try:\n        chunk = os.read(fd, 65536)\n    except OSError:\n        break\n    if not chunk:\n        break\n    out += chunk\nsys.stdout.buffer.write(out)\nsys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n`;
    const output = await new Promise<string>((resolve) => {
      const child = spawn(
        'python3',
        ['-c', pty, process.execPath, CLI_ENTRY, 'object', 'put', 'transfers/medium.bin', '--file', medium],
        { env: { ...cleanEnv(), ...cliEnv(ledge), LEDGE_CONFIG_DIR: tempDir('ledge-cfg-') } },
      );
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.on('close', () => resolve(text));
    });
    expect(output).toMatch(
      /Uploading transfers\/medium\.bin {2}\[[#.]{20}\] {2}[\d.]+ \/ 40\.0 MiB {2}\d+% {2}[\d.]+ MiB\/s {2}ETA \d+:\d\d/,
    );
    expect(output).toContain('Uploaded transfers/medium.bin (41943040 bytes');
  });

  it('Ctrl+C during an upload aborts it: exit 130, no object, no upload left', async () => {
    // Interrupted once the upload has started sending parts.
    const run = await runMeasured(
      ['object', 'put', 'transfers/cancelled.bin', '--file', big],
      (_stderr, elapsed) => elapsed > 1500,
    );
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toContain('upload of transfers/cancelled.bin cancelled: nothing was stored');
    const head = await ledge.server.platform.storage.objects.head(
      await ledge.server.platform.storage.buckets.require(ledge.accountId, 'transfers'),
      'cancelled.bin',
    );
    expect(head).toBeUndefined();
    expect(await pendingUploads()).toBe(0);
  });

  it('Ctrl+C during a download leaves no file and no partial file', async () => {
    const out = join(dir, 'cancelled-download.bin');
    const run = await runMeasured(
      ['object', 'get', 'transfers/big.bin', '--file', out],
      () => existsSync(`${out}.partial`) && statSync(`${out}.partial`).size > 20 * MiB,
    );
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toContain('download of transfers/big.bin cancelled: nothing was written');
    expect(existsSync(out)).toBe(false);
    expect(existsSync(`${out}.partial`)).toBe(false);
  });
});
