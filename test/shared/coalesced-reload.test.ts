import { describe, expect, it } from 'vitest';
import { CoalescedReload } from '../../src/shared/coalesced-reload.ts';
import { systemClock } from '../../src/shared/clock.ts';
import { createLogger } from '../../src/shared/logger.ts';

/** A load that waits until the test lets it finish, counting its runs. */
function gatedLoad() {
  const releases: (() => void)[] = [];
  let runs = 0;
  return {
    load: () => {
      runs++;
      return new Promise<void>((resolve) => releases.push(resolve));
    },
    runs: () => runs,
    releaseNext: () => releases.shift()?.(),
  };
}

describe('CoalescedReload', () => {
  it('runs one reload at a time; the calls made during one share a single reload after it', async () => {
    const gate = gatedLoad();
    const reload = new CoalescedReload({ load: gate.load, failure: 'reload failed' });
    const first = reload.refresh();
    const during = [reload.refresh(), reload.refresh(), reload.refresh()];
    expect(gate.runs()).toBe(1);
    gate.releaseNext();
    await new Promise((r) => setImmediate(r));
    // The change that called during the first read is read by a second one, and only one.
    expect(gate.runs()).toBe(2);
    gate.releaseNext();
    await Promise.all([first, ...during]);
    expect(gate.runs()).toBe(2);
    reload.refresh();
    expect(gate.runs()).toBe(3);
    gate.releaseNext();
  });

  it('logs the failure of a background reload, and the next reload runs again', async () => {
    const lines: string[] = [];
    const logger = createLogger('error', systemClock, {}, (line) => lines.push(line), 'json');
    let fail = true;
    let runs = 0;
    const reload = new CoalescedReload({
      load: () => {
        runs++;
        return fail ? Promise.reject(new Error('database gone')) : Promise.resolve();
      },
      failure: 'hosts reload failed',
      logger,
    });
    reload.refreshSoon();
    await expect.poll(() => lines.length).toBe(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', msg: 'hosts reload failed' });
    fail = false;
    await reload.refresh();
    expect(runs).toBe(2);
    await reload.stop();
  });
});
