import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GulpedOutput } from '../../src/workerd/gulped-output.ts';

/** Runs `script` in sh with its stdout read by a GulpedOutput; resolves with what was seen when. */
async function run(script: string) {
  const lines: string[] = [];
  const output = new GulpedOutput(dir, (line) => lines.push(line));
  const child = spawn('sh', ['-c', script], { stdio: ['ignore', output.stdio, 'inherit'] });
  output.attach(child.stdout);
  const atExit = await new Promise<string[]>((resolve) => child.once('exit', () => resolve([...lines])));
  output.drain();
  await output.ended;
  return { atExit, lines };
}

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('GulpedOutput', () => {
  it('delivers the lines a killed process wrote before its output ends, not after', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledge-gulp-'));
    // The last line is written just before the process is killed (as a spinning request's start line is):
    // with reads resting 5 ms, it is usually still in the pipe when the exit is seen.
    const { lines } = await run('echo first; sleep 0.05; echo "é €"; printf "last"; kill -9 $$');
    expect(lines).toEqual(['first', 'é €', 'last']);
    // The FIFO was unlinked as soon as both ends were open.
    expect(readdirSync(dir)).toEqual([]);
  });

  it('gathers the lines written while it rests into one read', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledge-gulp-'));
    // The lines of one read are delivered in one synchronous run: a run is told apart by a microtask.
    const readOf: number[] = [];
    let reads = 0;
    let inRun = false;
    const output = new GulpedOutput(dir, () => {
      if (!inRun) {
        inRun = true;
        reads++;
        queueMicrotask(() => (inRun = false));
      }
      readOf.push(reads);
    });
    const fifo = output.stdio as number;
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    // The test writes the FIFO itself, so the pace does not depend on a child's scheduling.
    writeSync(fifo, 'first\n');
    while (readOf.length === 0) await nextTurn();
    // The first line was read as it came, and the reader rests for GULP_MS. Then 20 lines, one per turn of
    // the event loop: read as they come, each turn's poll would read one (20 reads); resting, the reader
    // takes what waits in the pipe in one read when the rest is over.
    for (let i = 0; i < 20; i++) {
      writeSync(fifo, `line ${i}\n`);
      await nextTurn();
    }
    closeSync(fifo);
    await output.ended;
    expect(readOf).toHaveLength(21);
    // Twenty turns take far less than GULP_MS; a descheduled test process may split them once or twice.
    expect(new Set(readOf.slice(1)).size).toBeLessThanOrEqual(3);
  });
});
