import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/shared/clock.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { CronService } from '../../src/workers/crons/cron-service.ts';
import { CronStore } from '../../src/workers/crons/cron-store.ts';
import { tailCronRuns } from '../../src/workers/subsystem.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../load-balancing/helpers.ts';
import { accountSubdomain, api, callFunction, enableWorkersDev, functionsPort, uploadScript } from './helpers.ts';
import { startLedgeTail, startWranglerTail, waitForSessions, type RunningTail } from './tail-helpers.ts';
import { ManualClock } from '../helpers/manual-clock.ts';

const WORKER = `export default {
  fetch() { return new Response('ok'); },
  async scheduled(controller) {
    console.log('tick', controller.cron);
    if (controller.cron === '0 12 * * MON') throw new RangeError('monday noon fails');
  },
};
`;

interface TailEvent {
  outcome: string;
  event: { cron?: string; scheduledTime?: number };
}

/** Cron Trigger runs reach open tails (issue 28 point 2), as Cloudflare's tail shows a scheduled event. */
describe('Cron Trigger runs in a live tail', () => {
  let ledge: TestLedge;
  const records: Record<string, unknown>[] = [];
  const running: RunningTail[] = [];
  const base = () => `/accounts/${ledge.accountId}/workers/scripts/ticker`;
  const trigger = async (cron: string) => {
    const res = await api(ledge, 'POST', `${base()}/schedules/trigger`, { cron });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result as { status: string };
  };

  beforeAll(async () => {
    ledge = await startLedge({
      logger: createLogger(
        'info',
        systemClock,
        {},
        (line) => records.push(JSON.parse(line) as Record<string, unknown>),
        'json',
      ),
    });
    expect((await uploadScript(ledge, 'ticker', { modules: { 'index.js': WORKER } })).status).toBe(200);
    await enableWorkersDev(ledge, 'ticker');
    const crons = [{ cron: '*/5 * * * *' }, { cron: '0 12 * * MON' }];
    expect((await api(ledge, 'PUT', `${base()}/schedules`, crons)).status).toBe(200);
  });
  afterAll(async () => {
    await Promise.all(running.splice(0).map((t) => t.stop()));
    await ledge?.close();
  });

  it('wrangler tail gets a scheduled event with cron, scheduledTime, the console output and outcome', async () => {
    const json = startWranglerTail(ledge, ['ticker', '--format', 'json']);
    const pretty = startWranglerTail(ledge, ['ticker', '--format', 'pretty']);
    running.push(json, pretty);
    await waitForSessions(ledge, 2, 45_000, [json, pretty]);
    const before = Date.now();
    expect((await trigger('*/5 * * * *')).status).toBe('ok');
    await json.waitForEvent((e) => JSON.stringify(e).includes('"cron"'));
    const [event] = json.events();
    expect(event).toMatchObject({
      outcome: 'ok',
      scriptName: 'ticker',
      event: { cron: '*/5 * * * *' },
      logs: [{ level: 'log', message: ['tick', '*/5 * * * *'] }],
      exceptions: [],
    });
    const scheduled = (event!['event'] as { scheduledTime: number }).scheduledTime;
    expect(scheduled).toBeGreaterThanOrEqual(before - 1000);
    expect(scheduled).toBeLessThanOrEqual(Date.now());
    expect(event).not.toHaveProperty('event.request');
    // wrangler's pretty format knows it as a scheduled event: `"<cron>" @ <time> - Ok`.
    await pretty.waitFor((l) => /^"\*\/5 \* \* \* \*" @ .+ - Ok$/.test(l));

    expect((await trigger('0 12 * * MON')).status).toBe('exception');
    await json.waitForEvent((e) => JSON.stringify(e).includes('monday noon fails'));
    const failed = json.events().find((e) => (e['event'] as { cron: string }).cron === '0 12 * * MON');
    expect(failed).toMatchObject({
      outcome: 'exception',
      exceptions: [{ name: 'RangeError', message: 'monday noon fails' }],
      logs: [{ message: ['tick', '0 12 * * MON'] }],
    });
    await pretty.waitFor((l) => l.startsWith('"0 12 * * MON" @ ') && l.endsWith('Exception Thrown'));
    await Promise.all(running.splice(0).map((t) => t.stop()));
  });

  it("the server's log line for each run carries a request id: the API call's, or one of the run's own", async () => {
    const ran = records.filter((r) => r['msg'] === 'cron trigger ran');
    expect(ran.length).toBeGreaterThanOrEqual(2);
    for (const record of ran) expect(record['request_id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('ledge tail prints the run as a scheduled line with its console output; --method excludes it', async () => {
    const all = startLedgeTail(ledge, ['ticker']);
    const json = startLedgeTail(ledge, ['ticker', '--format', 'json']);
    const byMethod = startLedgeTail(ledge, ['ticker', '--json', '--method', 'GET']);
    running.push(all, json, byMethod);
    await waitForSessions(ledge, 3, 45_000, [all, json, byMethod]);
    await trigger('*/5 * * * *');
    const line = await all.waitFor((l) => l.includes('[scheduled]'));
    expect(line).toMatch(/^\S+Z \[scheduled\] "\*\/5 \* \* \* \*" @ \S+Z \d+ms ok$/);
    await all.waitFor((l) => l.includes('[log] tick */5 * * * *'));
    const event = JSON.parse(await json.waitFor((l) => l.includes('"cron"')));
    expect(event).toMatchObject({ outcome: 'ok', event: { cron: '*/5 * * * *' } });
    // The run must NOT reach this session. A GET made after another session printed the run is a marker: the
    // server filters events per session and sends them in order, so once the GET is printed here, the run
    // would have been printed before it.
    const host = `ticker.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), host, '/after-the-run')).status).toBe(200);
    await byMethod.waitFor((l) => l.includes('/after-the-run'));
    expect(byMethod.stdout.filter((l) => l.includes('"cron"'))).toEqual([]);
  });

  it('a run on schedule (not triggered) reaches an open ledge tail as a scheduled event, with its time', async () => {
    const platform = ledge.server.platform;
    // Only this test's two tails are open, so that counting sessions says when they are.
    await Promise.all(running.splice(0).map((t) => t.stop()));
    await waitFor(() => (platform.functions.tails.connectedCount === 0 ? true : undefined), 15_000, 'no open tail');
    const pretty = startLedgeTail(ledge, ['ticker']);
    const json = startLedgeTail(ledge, ['ticker', '--format', 'json']);
    running.push(pretty, json);
    await waitForSessions(ledge, 2, 45_000, [pretty, json]);
    // A second scheduler over the server's store, runtime and tail traces, wired to the tails as the server's own
    // is (tailCronRuns), on a clock set 1 s before an occurrence of "*/5 * * * *" and then moved across it: the
    // timer fires as on schedule, without waiting for the real minute (crons.test.ts does the same for the run).
    const due = Math.ceil((Date.now() + 120_000) / 300_000) * 300_000;
    const clock = new ManualClock(due - 1_000);
    const scheduler = new CronService({
      store: new CronStore(platform.db),
      requireScript: (a, s) => platform.functions.workers.requireScript(a, s),
      runtime: platform.functions.runtime,
      logs: platform.functions.logs,
      logger: createLogger(
        'info',
        systemClock,
        {},
        (line) => records.push(JSON.parse(line) as Record<string, unknown>),
        'json',
      ),
      clock,
    });
    const unwire = tailCronRuns(scheduler, platform.functions.traces);
    await scheduler.start();
    try {
      await clock.advance(1_000);
      const at = new Date(due).toISOString();
      const event = JSON.parse(
        await json.waitFor((l) => l.includes('"cron"') && (JSON.parse(l) as TailEvent).event.scheduledTime === due),
      ) as TailEvent;
      expect(event).toMatchObject({
        outcome: 'ok',
        scriptName: 'ticker',
        event: { cron: '*/5 * * * *', scheduledTime: due },
        logs: [{ level: 'log', message: ['tick', '*/5 * * * *'] }],
      });
      const line = await pretty.waitFor((l) => l.includes(`[scheduled] "*/5 * * * *" @ ${at}`));
      expect(line).toMatch(/^\S+Z \[scheduled\] "\*\/5 \* \* \* \*" @ \S+Z \d+ms ok$/);
      await pretty.waitFor((l) => l.includes('[log] tick */5 * * * *'));
      // Recorded as a run on schedule, and its log line has a request id of its own (no API call started it).
      const ran = records.find((r) => r['msg'] === 'cron trigger ran' && r['scheduled_time'] === at);
      expect(ran?.['request_id']).toMatch(/^[0-9a-f-]{36}$/);
      const runs = await new CronStore(platform.db).listRuns(ledge.accountId, 'ticker', 100);
      expect(runs.find((r) => r.scheduled_time === at)).toMatchObject({ source: 'schedule', status: 'ok' });
    } finally {
      unwire();
      await scheduler.stop();
      await Promise.all(running.splice(0).map((t) => t.stop()));
    }
  });
});
