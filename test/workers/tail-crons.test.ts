import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/shared/logger.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { api, enableWorkersDev, uploadScript } from './helpers.ts';
import { startLedgeTail, startWranglerTail, waitForSessions, type RunningTail } from './tail-helpers.ts';

const WORKER = `export default {
  fetch() { return new Response('ok'); },
  async scheduled(controller) {
    console.log('tick', controller.cron);
    if (controller.cron === '0 12 * * MON') throw new RangeError('monday noon fails');
  },
};
`;

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
      logger: createLogger('info', {}, (line) => records.push(JSON.parse(line) as Record<string, unknown>), 'json'),
    });
    expect((await uploadScript(ledge, 'ticker', { modules: { 'index.js': WORKER } })).status).toBe(200);
    await enableWorkersDev(ledge, 'ticker');
    const crons = [{ cron: '*/5 * * * *' }, { cron: '0 12 * * MON' }];
    expect((await api(ledge, 'PUT', `${base()}/schedules`, crons)).status).toBe(200);
  }, 120_000);
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
  }, 120_000);

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
    // Real time: the run must NOT reach this session, and nothing marks that it will not (another process).
    await new Promise((r) => setTimeout(r, 500));
    expect(byMethod.stdout.filter((l) => l.includes('"cron"'))).toEqual([]);
  }, 120_000);
});
