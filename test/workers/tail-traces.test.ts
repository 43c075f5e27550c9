import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TailTraces, type TracedRequest, type TraceSource } from '../../src/workerd/tail-traces.ts';
import { systemClock } from '../../src/shared/clock.ts';
import { TRACE_MARKER } from '../../src/workerd/isolate/contract.ts';

/** A workerd process as the traces see it: its output ends when the test says, after a limit kill. */
function killableSource(): TraceSource & { kill(limit: 'cpu' | 'memory'): void } {
  let end!: () => void;
  const source = {
    outputEnded: new Promise<void>((resolve) => (end = resolve)),
    limitExceeded: undefined as 'cpu' | 'memory' | undefined,
    kill(limit: 'cpu' | 'memory') {
      source.limitExceeded = limit;
      end();
    },
  };
  return source;
}

const line = (rest: string) => `${TRACE_MARKER}acct spinner ${rest}`;

describe('TailTraces: start and end lines of a killed process', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const newTraces = () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledge-traces-'));
    dirs.push(dir);
    const traces = new TailTraces(dir, systemClock);
    const seen: TracedRequest[] = [];
    traces.subscribe('acct', 'spinner', (request) => seen.push(request));
    return { traces, seen };
  };

  it('reports the requests still running as killed, and not those a later start line named as ended', async () => {
    const { traces, seen } = newTraces();
    const source = killableSource();
    traces.ingestLine(line('s r1 - GET http://spinner.example/quick-1'), source);
    traces.ingestLine(line('s r2 - GET http://spinner.example/quick-2'), source);
    traces.ingestLine(line('s r3 - POST http://spinner.example/slow'), source);
    // r1 and r2 ended; their end lines were queued in the isolate when r4 started, and die with it.
    traces.ingestLine(line('s r4 r1,r2 GET http://spinner.example/spin?a=b%20c'), source);
    expect(traces.pendingCount).toBe(4);
    source.kill('cpu');
    await source.outputEnded;
    await new Promise((resolve) => setImmediate(resolve));
    const request = (r: (typeof seen)[number]) => ('request' in r.event.event ? r.event.event.request : undefined);
    expect(seen.map((r) => [r.event.outcome, request(r)?.method, request(r)?.url])).toEqual([
      ['exceededCpu', 'POST', 'http://spinner.example/slow'],
      ['exceededCpu', 'GET', 'http://spinner.example/spin?a=b%20c'],
    ]);
    expect(traces.pendingCount).toBe(0);
  });

  it('passes an end line on as it came, also for a request named as ended before it', () => {
    const { traces, seen } = newTraces();
    const source = killableSource();
    traces.ingestLine(line('s r1 - GET http://spinner.example/a'), source);
    traces.ingestLine(line('s r2 r1 GET http://spinner.example/b'), source);
    const json = JSON.stringify({ outcome: 'ok', scriptName: 'spinner' });
    traces.ingestLine(`${line('e r1 ')}${json}`, source);
    expect(seen.map((r) => r.json)).toEqual([json]);
    expect(traces.pendingCount).toBe(1);
  });

  it('ignores a malformed start line instead of recording a request without a URL', () => {
    const { traces } = newTraces();
    expect(traces.ingestLine(line('s r1 -'))).toBe(true);
    expect(traces.ingestLine(line('s r1 - GET'))).toBe(true);
    expect(traces.pendingCount).toBe(0);
  });
});
