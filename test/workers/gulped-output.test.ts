import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GulpedOutput } from '../../src/workers/runtime/gulped-output.ts';

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
    const reads: number[] = [];
    const output = new GulpedOutput(dir, () => reads.push(Date.now()));
    // 50 lines over ~50 ms: read as they come, that is about 50 reads; in 5 ms gulps about 10.
    const child = spawn('sh', ['-c', 'i=0; while [ $i -lt 50 ]; do echo line $i; sleep 0.001; i=$((i+1)); done'], {
      stdio: ['ignore', output.stdio, 'inherit'],
    });
    output.attach(child.stdout);
    await output.ended;
    expect(reads).toHaveLength(50);
    const gulps = new Set(reads).size; // lines of one read are delivered in the same millisecond
    expect(gulps).toBeLessThan(30);
  });
});
