import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { accountMigrations } from '../../src/accounts/index.ts';
import { applyMigrations } from '../../src/db/index.ts';
import { FunctionSamples } from '../../src/workers/function-samples.ts';
import { workerMigrations } from '../../src/workers/index.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../helpers/backends.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import {
  accountSubdomain,
  api,
  callFunction,
  enableWorkersDev,
  functionsPort,
  tenant,
  uploadScript,
} from './helpers.ts';
import { systemClock } from '../../src/shared/clock.ts';

interface History {
  script_name: string;
  range: string;
  step_seconds: number;
  points: { t: number; requests: number; exceptions: number; status: Record<string, number> }[];
}

const WORKER = `export default {
  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (path === '/throw') throw new Error('boom');
    return new Response('ok', { status: path === '/missing' ? 404 : path === '/moved' ? 301 : 200 });
  },
};`;

describe('GET /workers/scripts/{name}/requests/history', () => {
  let ledge: TestLedge;
  let host: string;
  const path = (script: string, range = 'hour') =>
    `/accounts/${ledge.accountId}/workers/scripts/${script}/requests/history?range=${range}`;

  beforeAll(async () => {
    ledge = await startLedge();
    expect((await uploadScript(ledge, 'counted', { modules: { 'index.js': WORKER } })).status).toBe(200);
    await enableWorkersDev(ledge, 'counted');
    host = `counted.${await accountSubdomain(ledge)}.localhost`;
  });
  afterAll(async () => ledge?.close());

  const totals = (history: History) => {
    const sum = { requests: 0, exceptions: 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
    for (const p of history.points) {
      sum.requests += p.requests;
      sum.exceptions += p.exceptions;
      for (const cls of ['2xx', '3xx', '4xx', '5xx'] as const) sum[cls] += p.status[cls]!;
    }
    return sum;
  };

  it("counts the function's requests by status class per minute, up to the last request", async () => {
    const before = await api(ledge, 'GET', path('counted'));
    expect(before.status).toBe(200);
    expect(totals(before.body.result as History).requests).toBe(0);
    const port = functionsPort(ledge);
    for (let i = 0; i < 5; i++) expect((await callFunction(port, host, '/')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await callFunction(port, host, '/missing')).status).toBe(404);
    expect((await callFunction(port, host, '/moved')).status).toBe(301);
    expect((await callFunction(port, host, '/throw')).status).toBe(500);

    const hour = (await api(ledge, 'GET', path('counted'))).body.result as History;
    expect(hour).toMatchObject({ script_name: 'counted', range: 'hour', step_seconds: 60 });
    // A throw is an exception, not a response of the script's (the client gets workerd's 500), as in /metrics.
    expect(totals(hour)).toEqual({ requests: 10, exceptions: 1, '2xx': 5, '3xx': 1, '4xx': 3, '5xx': 0 });
    for (const p of hour.points) expect(p.t % 60).toBe(0);
    // The same requests in the coarser ranges, not counted twice by the second scrape.
    const day = (await api(ledge, 'GET', path('counted', 'day'))).body.result as History;
    expect(day.step_seconds).toBe(300);
    expect(totals(day).requests).toBe(10);
    const week = (await api(ledge, 'GET', path('counted', 'week'))).body.result as History;
    expect(week.step_seconds).toBe(3600);
    expect(totals(week)).toEqual(totals(hour));
  });

  it('refuses an unknown range, an unknown script, and another account', async () => {
    const bad = await api(ledge, 'GET', path('counted', 'month'));
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ code: 10021 });
    const missing = await api(ledge, 'GET', path('nope'));
    expect(missing.status).toBe(404);
    expect(missing.body.errors[0]).toMatchObject({ code: 10007 });
    const other = await tenant(ledge, 'Other');
    const foreign = await fetch(`${ledge.apiUrl}${path('counted')}`, { headers: other.tokenHeaders });
    expect(foreign.status).toBe(403);
  });

  it("forgets a deleted script's samples", async () => {
    const deleted = await api(ledge, 'DELETE', `/accounts/${ledge.accountId}/workers/scripts/counted?force=true`);
    expect(deleted.status).toBe(200);
    const rows = await ledge.server.platform.db.all(
      'SELECT * FROM worker_request_samples WHERE account_id = ? AND script_name = ?',
      [ledge.accountId, 'counted'],
    );
    expect(rows).toEqual([]);
  });
});

describe.each(BACKENDS)('%s: request samples, their roll-up and retention', (backend) => {
  let test: TestDatabase | undefined;
  afterEach(async () => test?.close());

  it('adds growth into its minute, rolls minutes past 24 hours into hours, and drops hours past 7 days', async () => {
    test = await openTestDatabase(backend);
    await applyMigrations(test.db, [...accountMigrations, ...workerMigrations], systemClock);
    const samples = new FunctionSamples(test.db, systemClock);
    const now = Date.UTC(2026, 10, 26, 12, 30, 10);
    const growth = (requests: number) => [
      { account: 'a', script: 's', requests, exceptions: 1, status: [0, requests - 1, 0, 1, 0] },
    ];
    const hoursAgo = (h: number) => now - h * 3600_000;
    // Two scrapes in the same minute add up; an old day's minutes and a 9-day-old one.
    await samples.add(growth(4), now);
    await samples.add(growth(2), now + 20_000);
    await samples.add(growth(10), hoursAgo(30));
    await samples.add(growth(6), hoursAgo(30) + 120_000);
    await samples.add(growth(7), hoursAgo(9 * 24));
    // Another script's traffic is not this one's.
    await samples.add([{ account: 'a', script: 'other', requests: 50, exceptions: 0, status: [0, 50, 0, 0, 0] }], now);

    const hour = await samples.series('a', 's', 'hour', now + 30_000);
    expect(hour).toEqual([
      {
        t: Math.floor(now / 60_000) * 60,
        requests: 6,
        exceptions: 2,
        status: { '1xx': 0, '2xx': 4, '3xx': 0, '4xx': 2, '5xx': 0 },
      },
    ]);

    await samples.rollUp(now);
    const rows = await test.db.all<{ resolution: number; bucket: number; requests: number }>(
      "SELECT resolution, bucket, requests FROM worker_request_samples WHERE script_name = 's' ORDER BY bucket",
    );
    // The 30-hour-old minutes are one hour row now; the 9-day-old minute is gone; today's minute stays.
    expect(rows.map((r) => [Number(r.resolution), Number(r.requests)])).toEqual([
      [3600, 16],
      [60, 6],
    ]);
    const week = await samples.series('a', 's', 'week', now);
    expect(week.reduce((sum, p) => sum + p.requests, 0)).toBe(22);
    expect(week.every((p) => p.t % 3600 === 0)).toBe(true);
  });
});
