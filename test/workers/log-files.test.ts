import { existsSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScriptLogFile } from '../../src/workerd/log-file.ts';
import { LOG_FILE_BYTES, LOG_PENDING_BYTES } from '../../src/workerd/log-limits.ts';
import { tempDir } from '../helpers/ledge.ts';
import { systemClock } from '../../src/shared/clock.ts';

/**
 * Issue 26 point 5: a script's kept console output used to grow without bound (one tenant wrote 60 MiB) and
 * was read back whole, on the event loop, by every history read. Now it is rotated at LOG_FILE_BYTES (one
 * rotated file kept) and read from the end, in chunks, only as far back as asked.
 */
const lineOf = (n: number, pad = 0) =>
  `${JSON.stringify({ time: new Date(n).toISOString(), level: 'log', message: [`line ${n}`, 'x'.repeat(pad)] })}\n`;

async function read(file: ScriptLogFile, count: number): Promise<{ text: string; chunks: number; biggest: number }> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of file.tail(count)) chunks.push(chunk);
  return {
    text: Buffer.concat(chunks).toString('utf8'),
    chunks: chunks.length,
    biggest: Math.max(0, ...chunks.map((c) => c.length)),
  };
}

const numbers = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => Number((JSON.parse(line) as { message: string[] }).message[0]!.slice(5)));

describe('function log files', () => {
  it('a script’s log no longer grows without bound: rotated past LOG_FILE_BYTES, one rotated file kept', async () => {
    const path = join(tempDir('ledge-logs-'), 'acct', 'flood.log');
    const errors: unknown[] = [];
    const file = new ScriptLogFile(path, (error) => errors.push(error), systemClock);
    // 40 MiB of 4 KiB lines, in bursts the size of what one gulp of workerd's stdout brings.
    const lineBytes = lineOf(0, 4000).length;
    const total = Math.ceil((40 * 1024 * 1024) / lineBytes);
    for (let n = 0; n < total; n++) {
      file.append(lineOf(n, 4000));
      if (n % 200 === 199) await file.flush();
    }
    await file.flush();
    expect(errors).toEqual([]);
    expect(statSync(path).size).toBeLessThanOrEqual(LOG_FILE_BYTES);
    expect(statSync(`${path}.1`).size).toBeLessThanOrEqual(LOG_FILE_BYTES);
    expect(existsSync(`${path}.2`)).toBe(false);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);

    // The last lines, in order, the newest last.
    expect(numbers((await read(file, 3)).text)).toEqual([total - 3, total - 2, total - 1]);
    // Across the rotation: as many lines as both files hold, contiguous, ending with the newest.
    const kept = numbers(readFileSync(`${path}.1`, 'utf8')).length + numbers(readFileSync(path, 'utf8')).length;
    const all = await read(file, 99_999);
    const got = numbers(all.text);
    expect(got).toHaveLength(kept);
    expect(got.at(-1)).toBe(total - 1);
    expect(got.every((n, i) => i === 0 || n === got[i - 1]! + 1)).toBe(true);
    // Streamed in chunks, none of them the whole history.
    expect(all.chunks).toBeGreaterThan(30);
    expect(all.biggest).toBeLessThanOrEqual(256 * 1024);
    // A server that did not write these files (a restart) finds the same, by reading them backwards once.
    const restarted = new ScriptLogFile(path, () => undefined, systemClock);
    expect(numbers((await read(restarted, 99_999)).text)).toEqual(got);
    expect(numbers((await read(restarted, 99_999)).text)).toEqual(got);
    expect(numbers((await read(restarted, 2)).text)).toEqual(got.slice(-2));
    // A count that ends inside the older file starts at a line boundary there.
    const inOlder = numbers(readFileSync(path, 'utf8')).length + 5;
    expect(numbers((await read(file, inOlder)).text)).toEqual(got.slice(-inOlder));
  });

  it('lines that come faster than the disk takes them are dropped past LOG_PENDING_BYTES, and a note says how many', async () => {
    const path = join(tempDir('ledge-logs-'), 'acct', 'burst.log');
    const file = new ScriptLogFile(path, () => undefined, systemClock);
    // All in one turn of the event loop: nothing can be written meanwhile.
    const line = lineOf(1, 10_000);
    const count = Math.ceil((LOG_PENDING_BYTES * 2) / line.length);
    for (let n = 0; n < count; n++) file.append(line);
    await file.flush();
    const text = readFileSync(path, 'utf8');
    expect(text.length).toBeLessThanOrEqual(LOG_PENDING_BYTES + 1024);
    expect(text.length).toBeGreaterThan(LOG_PENDING_BYTES - line.length - 1);
    const last = JSON.parse(text.trimEnd().split('\n').at(-1)!) as { level: string; message: string[] };
    expect(last.level).toBe('warn');
    expect(last.message[0]).toMatch(/^\[ledge\] \d+ console line\(s\) of this script were dropped/);
  });

  it('half a line left by a killed server does not swallow the next line', async () => {
    const dir = join(tempDir('ledge-logs-'), 'acct');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'torn.log');
    writeFileSync(path, `${lineOf(1)}{"time":"2026-`);
    const file = new ScriptLogFile(path, () => undefined, systemClock);
    file.append(lineOf(2));
    await file.flush();
    const { text } = await read(file, 1);
    expect(numbers(text)).toEqual([2]);
  });

  it('an empty or missing history reads as nothing', async () => {
    const file = new ScriptLogFile(join(tempDir('ledge-logs-'), 'acct', 'none.log'), () => undefined, systemClock);
    expect((await read(file, 10)).text).toBe('');
  });
});
