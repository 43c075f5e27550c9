import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CronService } from '../../src/workers/crons/cron-service.ts';
import { CronStore } from '../../src/workers/crons/cron-store.ts';
import { cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { waitFor } from '../load-balancing/helpers.ts';
import { accountSubdomain, api, callFunction, functionsPort } from './helpers.ts';
import { ManualClock } from '../helpers/manual-clock.ts';

// The scheduled handler leaves what it saw in R2 and the fetch handler reads it back: a run is
// observable from outside. "0 12 * * MON" throws, so a failed run can be told apart.
const WORKER = `export default {
  async fetch(request, env) {
    const seen = await env.SEEN.get('last');
    return new Response(seen ? await seen.text() : 'never');
  },
  async scheduled(controller, env, ctx) {
    console.log('tick', controller.cron);
    if (controller.cron === '0 12 * * MON') throw new Error('monday noon fails');
    await env.SEEN.put('last', controller.cron + ' @ ' + new Date(controller.scheduledTime).toISOString());
  },
};
`;

let ledge: TestLedge;
let project: string;

/** A wrangler project of WORKER with the SEEN bucket and these Cron Triggers; answers its directory. */
function cronProject(name: string, extraToml: string, crons: string[]): string {
  const dir = tempDir(`ledge-crons-${name}-`);
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src/index.js'), WORKER);
  writeFileSync(
    join(dir, 'wrangler.toml'),
    `name = "${name}"\nmain = "src/index.js"\ncompatibility_date = "2025-01-01"\n${extraToml}\n` +
      `[[r2_buckets]]\nbinding = "SEEN"\nbucket_name = "cron-seen"\n\n[triggers]\ncrons = ${JSON.stringify(crons)}\n`,
  );
  return dir;
}
const runs = () => api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/scripts/ticker/schedules/runs?limit=100`);

beforeAll(async () => {
  ledge = await startLedge();
  project = cronProject('ticker', '', ['* * * * *', '0 12 * * MON']);
  expect((await api(ledge, 'POST', `/accounts/${ledge.accountId}/r2/buckets`, { name: 'cron-seen' })).status).toBe(200);
});
afterAll(async () => {
  await ledge?.close();
});

describe('Cron Triggers', () => {
  it('wrangler deploy with [triggers] crons works unchanged and sets the schedules', async () => {
    const deployed = await runWrangler(['deploy'], {
      apiUrl: ledge.apiUrl,
      cwd: project,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
      timeoutMs: 90_000,
    });
    expect(deployed.code, deployed.stderr + deployed.stdout).toBe(0);
    expect(deployed.stdout).toContain('schedule: * * * * *');
    const got = await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/scripts/ticker/schedules`);
    expect(got.status).toBe(200);
    expect(got.body.result.schedules.map((s: { cron: string }) => s.cron)).toEqual(['* * * * *', '0 12 * * MON']);
    expect(got.body.result.schedules[0].created_on).toMatch(/^\d{4}-\d\d-\d\dT/);
    // The scheduler planned the next minute.
    const planned = ledge.server.platform.functions.crons.nextRuns(ledge.accountId, 'ticker');
    expect(planned.find((p) => p.cron === '* * * * *')?.next).toMatch(/:00\.000Z$/);
  });

  it('`ledge deploy` sends triggers.crons too, and an empty list removes them', async () => {
    const dir = tempDir('ledge-crons-deploy-');
    mkdirSync(join(dir, 'src'));
    writeFileSync(
      join(dir, 'src/index.js'),
      'export default { fetch() { return new Response("x"); }, scheduled() {} };',
    );
    const config = (crons: string) =>
      `name = "nightly"\nmain = "src/index.js"\ncompatibility_date = "2025-01-01"\n\n[triggers]\ncrons = ${crons}\n`;
    writeFileSync(join(dir, 'wrangler.toml'), config('["0 3 * * *", "30 4 1 JAN *"]'));
    const deployed = await runCli(['deploy', '--json'], { env: cliEnv(ledge), cwd: dir });
    expect(deployed.code, deployed.stderr).toBe(0);
    const path = `/accounts/${ledge.accountId}/workers/scripts/nightly/schedules`;
    const crons = async () =>
      ((await api(ledge, 'GET', path)).body.result.schedules as { cron: string }[]).map((s) => s.cron);
    expect(await crons()).toEqual(['0 3 * * *', '30 4 1 JAN *']);
    writeFileSync(join(dir, 'wrangler.toml'), config('[]'));
    expect((await runCli(['deploy'], { env: cliEnv(ledge), cwd: dir })).code).toBe(0);
    expect(await crons()).toEqual([]);
  });

  it('refuses invalid crons and unknown scripts with v4 errors, never 5xx', async () => {
    const path = `/accounts/${ledge.accountId}/workers/scripts/ticker/schedules`;
    for (const body of [[{ cron: '61 * * * *' }], [{ cron: 'hourly' }], { cron: '* * * * *' }, [{}], 'x']) {
      const res = await api(ledge, 'PUT', path, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.success).toBe(false);
    }
    const bad = await api(ledge, 'PUT', path, [{ cron: '61 * * * *' }]);
    expect(bad.body.errors[0]).toMatchObject({ code: 10100 });
    expect(bad.body.errors[0].message).toContain('minute "61"');
    // Nothing was half-written: the schedules are the deployed ones.
    const got = await api(ledge, 'GET', path);
    expect(got.body.result.schedules).toHaveLength(2);
    const missing = await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/scripts/nope/schedules`);
    expect(missing.status).toBe(404);
    expect(missing.body.errors[0].code).toBe(10007);
  });

  it('`ledge crons trigger` runs scheduled() in workerd, records the run, and shows it in runs and the logs', async () => {
    const env = cliEnv(ledge);
    const triggered = await runCli(['crons', 'trigger', 'ticker', '--json'], { env });
    expect(triggered.code, triggered.stderr).toBe(0);
    const run = JSON.parse(triggered.stdout);
    expect(run).toMatchObject({ cron: '* * * * *', source: 'manual', status: 'ok', error: null });
    const host = `ticker.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe(`* * * * * @ ${run.scheduled_time}`);

    const failed = await runCli(['crons', 'trigger', 'ticker', '--cron', '0 12 * * MON'], { env });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('scheduled() exception');

    const listed = await runCli(['crons', 'runs', 'ticker'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/0 12 \* \* MON\s+manual\s+exception/);
    expect(listed.stdout).toMatch(/\* \* \* \* \*\s+manual\s+ok/);
    const schedules = await runCli(['crons', 'list', 'ticker'], { env });
    expect(schedules.stdout).toContain('0 12 * * MON');

    // The function's log stream (ledge tail) has its console output, the thrown error and one line per run.
    const lines = (await ledge.server.platform.functions.logs.recent(ledge.accountId, 'ticker', 20)).map((l) =>
      l.message.join(' '),
    );
    expect(lines).toContain('tick * * * * *');
    expect(lines.some((l) => l.includes('scheduled() threw: Error: monday noon fails'))).toBe(true);
    expect(lines.some((l) => l.startsWith('[cron] "0 12 * * MON"') && l.includes('exception'))).toBe(true);
  });

  it('runs on schedule at whole minutes and does not replay a backlog after downtime', async () => {
    const platform = ledge.server.platform;
    // A second scheduler over the same store and runtime, on a clock the test moves to just before a minute
    // boundary and then across it: the real path (store claim, ping service, workerd scheduled()) without
    // waiting for a minute.
    const minute = (t: number) => Math.ceil(t / 60_000) * 60_000;
    const target = minute(Date.now() + 120_000);
    const clock = new ManualClock(target - 1_000);
    const scheduler = new CronService({
      store: new CronStore(platform.db),
      requireScript: (a, s) => platform.functions.workers.requireScript(a, s),
      runtime: platform.functions.runtime,
      logs: platform.functions.logs,
      logger: platform.logger,
      clock,
    });
    await scheduler.start();
    try {
      await clock.advance(1_000);
      const first = await waitFor(
        async () => {
          const all = (await runs()).body.result as { scheduled_time: string; status: string; source: string }[];
          return all.find(
            (r) =>
              r.source === 'schedule' && r.scheduled_time === new Date(target).toISOString() && r.status !== 'running',
          );
        },
        20_000,
        'the scheduled run',
      );
      expect(first.status).toBe('ok');

      // Down for ten minutes: on start, only the next occurrence from now is planned.
      await scheduler.stop();
      const later = target + 10 * 60_000;
      await clock.advance(later - 1_000 - clock.now());
      await scheduler.start();
      expect(scheduler.nextRuns(ledge.accountId, 'ticker').find((p) => p.cron === '* * * * *')?.next).toBe(
        new Date(later).toISOString(),
      );
      await clock.advance(1_000);
      await waitFor(
        async () => {
          const all = (await runs()).body.result as { scheduled_time: string; status: string }[];
          return all.find((r) => r.scheduled_time === new Date(later).toISOString() && r.status === 'ok');
        },
        20_000,
        'the run after the downtime',
      );
      const all = (await runs()).body.result as { scheduled_time: string; source: string }[];
      const missed = all.filter((r) => {
        const t = Date.parse(r.scheduled_time);
        return r.source === 'schedule' && t > target && t < later;
      });
      expect(missed).toEqual([]);
      // The same occurrence is never run twice (a second node, or a restart in the same minute).
      const store = new CronStore(platform.db);
      const claimed = await store.claimRun({
        id: 'dup',
        account_id: ledge.accountId,
        script_name: 'ticker',
        cron: '* * * * *',
        scheduled_time: new Date(later).toISOString(),
        source: 'schedule',
        started_on: new Date().toISOString(),
      });
      expect(claimed).toBe(false);
    } finally {
      await scheduler.stop();
    }
  });

  it('runs scheduled() of a Worker that is not routed on workers.dev (workers_dev = false), as Cloudflare does', async () => {
    const quiet = cronProject('unrouted', 'workers_dev = false\n', ['*/5 * * * *']);
    const env = cliEnv(ledge);
    const deployed = await runCli(['deploy', '--config', join(quiet, 'wrangler.toml')], { env });
    expect(deployed.code, deployed.stderr).toBe(0);
    const subdomain = await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/scripts/unrouted/subdomain`);
    expect(subdomain.body.result.enabled).toBe(false);
    // Not reachable by Host...
    const host = `unrouted.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), host, '/')).status).toBe(404);
    // ...but its Cron Trigger runs it, and what it wrote is there.
    const triggered = await runCli(['crons', 'trigger', 'unrouted', '--json'], { env });
    expect(triggered.code, triggered.stderr).toBe(0);
    const run = JSON.parse(triggered.stdout);
    expect(run).toMatchObject({ cron: '*/5 * * * *', status: 'ok', error: null });
    const ticker = `ticker.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), ticker, '/')).text).toBe(`*/5 * * * * @ ${run.scheduled_time}`);

    // Without Cron Triggers it is no longer loaded: a manual run has nothing to run.
    expect(
      (await api(ledge, 'PUT', `/accounts/${ledge.accountId}/workers/scripts/unrouted/schedules`, [])).status,
    ).toBe(200);
    const target = { accountId: ledge.accountId, script: 'unrouted', cron: '*/5 * * * *', scheduledTime: Date.now() };
    expect(await ledge.server.platform.functions.runtime.runScheduled(target)).toEqual({ outcome: 'not_loaded' });
  });
});
