import { describe, expect, it } from 'vitest';
import type { Logger } from '../../src/shared/logger.ts';
import { PeriodicJob } from '../../src/shared/periodic-job.ts';
import { ManualClock } from '../helpers/manual-clock.ts';

/** A pass that records when it ran and finishes only when the test lets it. */
function passes(clock: ManualClock) {
  const started: number[] = [];
  const release: (() => void)[] = [];
  const run = () => {
    started.push(clock.monotonic());
    return new Promise<void>((resolve) => release.push(resolve));
  };
  return { started, run, finishAll: () => release.splice(0).forEach((resolve) => resolve()) };
}

describe('PeriodicJob on a ManualClock', () => {
  it('runs at fixed times from start, first after firstAfterMs, and never two passes at once', async () => {
    const clock = new ManualClock();
    const job = passes(clock);
    const periodic = new PeriodicJob({ name: 'p', everyMs: 1_000, firstAfterMs: 300, clock, run: job.run });
    periodic.start();
    await clock.advance(299);
    expect(job.started).toEqual([]);
    await clock.advance(1);
    expect(job.started).toEqual([300]);
    // Still running when the next two are due: both are skipped, not queued.
    await clock.advance(2_000);
    expect(job.started).toEqual([300]);
    job.finishAll();
    await clock.advance(1_000);
    // Due times stay on the grid of the first pass (300 + k * 1000), whatever a pass took.
    expect(job.started).toEqual([300, 3_300]);
    job.finishAll();
    await periodic.stop();
    expect(clock.pending).toBe(0);
  });

  it('stop() waits for the pass under way and no pass starts after it', async () => {
    const clock = new ManualClock();
    const job = passes(clock);
    const periodic = new PeriodicJob({ name: 'p', everyMs: 100, firstAfterMs: 0, clock, run: job.run });
    periodic.start();
    await clock.advance(0);
    expect(job.started).toEqual([0]);
    let stopped = false;
    const stopping = periodic.stop().then(() => (stopped = true));
    await clock.advance(0);
    expect(stopped).toBe(false);
    job.finishAll();
    await stopping;
    await clock.advance(1_000);
    expect(job.started).toEqual([0]);
  });

  it('asks the gate for a lease of 1.5 periods before each pass, and skips the pass when refused', async () => {
    const clock = new ManualClock();
    const asked: [string, number][] = [];
    let mine = false;
    let ran = 0;
    const periodic = new PeriodicJob({
      name: 'sweep',
      lease: 'r2-sweep',
      everyMs: 1_000,
      clock,
      gate: (job, ttlMs) => {
        asked.push([job, ttlMs]);
        return Promise.resolve(mine);
      },
      run: async () => void ran++,
    });
    periodic.start();
    await clock.advance(1_000);
    expect(asked).toEqual([['r2-sweep', 1_500]]);
    expect(ran).toBe(0);
    mine = true;
    await clock.advance(1_000);
    expect(ran).toBe(1);
    await periodic.stop();
  });

  it('logs a failing pass and keeps going', async () => {
    const clock = new ManualClock();
    const errors: string[] = [];
    const logger = { error: (msg: string) => errors.push(msg) } as unknown as Logger;
    let calls = 0;
    const periodic = new PeriodicJob({
      name: 'flaky',
      everyMs: 10,
      clock,
      logger,
      run: async () => {
        calls++;
        if (calls === 1) throw new Error('boom');
      },
    });
    periodic.start();
    await clock.advance(10);
    await clock.advance(10);
    expect(calls).toBe(2);
    expect(errors).toEqual(['flaky failed']);
    await periodic.stop();
  });
});
