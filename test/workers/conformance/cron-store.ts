import { afterEach, beforeEach, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { SqlDatabase } from '../../../src/db/index.ts';
import { CronStore, type CronRunRecord } from '../../../src/workers/crons/cron-store.ts';
import type { WorkerStore } from '../../../src/workers/index.ts';
import { upload } from './worker-store.ts';

export interface CronStoreFixture {
  db: SqlDatabase;
  /** A second handle on the same database (a second node on PostgreSQL). */
  second: SqlDatabase;
  workers: WorkerStore;
  accounts: [string, string];
  close(): Promise<void>;
}

const AT = '2026-01-01T00:00:00.000Z';
const run = (accountId: string, script: string, scheduled: string, cron = '* * * * *') => ({
  id: randomUUID(),
  account_id: accountId,
  script_name: script,
  cron,
  scheduled_time: scheduled,
  source: 'schedule' as CronRunRecord['source'],
  started_on: new Date().toISOString(),
});

/** CronStore: schedules replaced as wrangler sends them, each occurrence claimed once across nodes. */
export function cronStoreConformance(open: () => Promise<CronStoreFixture>): void {
  let fixture: CronStoreFixture;
  let store: CronStore;
  let acct: string;
  beforeEach(async () => {
    fixture = await open();
    store = new CronStore(fixture.db);
    acct = fixture.accounts[0];
    for (const name of ['ticker', 'other']) await fixture.workers.saveVersion({ ...upload(acct, name), secrets: [] });
  });
  afterEach(async () => fixture.close());

  it('replaces a script’s schedules, keeping the creation time of the crons it keeps', async () => {
    const first = await store.replaceSchedules(acct, 'ticker', ['* * * * *', '0 12 * * MON'], AT);
    expect(first.map((s) => s.cron).sort()).toEqual(['* * * * *', '0 12 * * MON']);
    const later = '2026-02-01T00:00:00.000Z';
    const second = await store.replaceSchedules(acct, 'ticker', ['* * * * *', '*/5 * * * *'], later);
    expect(Object.fromEntries(second.map((s) => [s.cron, s.created_on]))).toEqual({
      '* * * * *': AT,
      '*/5 * * * *': later,
    });
    await store.replaceSchedules(acct, 'other', ['0 0 * * *'], AT);
    expect([...(await store.scheduledScripts())].sort()).toEqual([`${acct}/other`, `${acct}/ticker`]);
    expect((await store.allSchedules()).map((s) => `${s.script_name} ${s.cron}`)).toEqual([
      'other 0 0 * * *',
      'ticker * * * * *',
      'ticker */5 * * * *',
    ]);
    expect(await store.replaceSchedules(acct, 'ticker', [], later)).toEqual([]);
    expect([...(await store.scheduledScripts())]).toEqual([`${acct}/other`]);
  });

  it('claims an occurrence once, records its outcome, lists runs newest first', async () => {
    const a = run(acct, 'ticker', '2026-01-01T00:01:00.000Z');
    expect(await store.claimRun(a)).toBe(true);
    expect(await store.claimRun({ ...a, id: randomUUID() })).toBe(false);
    await store.finishRun(a.id, 'exception', 12, 'boom');
    const b = run(acct, 'ticker', '2026-01-01T00:02:00.000Z');
    b.started_on = new Date(Date.parse(a.started_on) + 1000).toISOString();
    expect(await store.claimRun(b)).toBe(true);
    const runs = await store.listRuns(acct, 'ticker', 10);
    expect(runs.map((r) => r.id)).toEqual([b.id, a.id]);
    expect(runs[1]).toMatchObject({ status: 'exception', duration_ms: 12, error: 'boom' });
    expect(runs[0]).toMatchObject({ status: 'running', duration_ms: null });
    expect(await store.listRuns(acct, 'other', 10)).toEqual([]);
  });

  it('keeps the newest 100 runs of a script', async () => {
    const start = Date.parse(AT);
    for (let i = 0; i < 105; i++) {
      const r = run(acct, 'ticker', new Date(start + i * 60_000).toISOString());
      r.started_on = new Date(start + i * 60_000).toISOString();
      expect(await store.claimRun(r)).toBe(true);
    }
    const runs = await store.listRuns(acct, 'ticker', 200);
    expect(runs).toHaveLength(100);
    expect(runs.at(-1)!.scheduled_time).toBe(new Date(start + 5 * 60_000).toISOString());
  });

  it('three nodes claiming one occurrence at once: exactly one runs it', async () => {
    const stores = [store, new CronStore(fixture.second), new CronStore(fixture.second)];
    const occurrence = run(acct, 'ticker', '2026-01-01T00:10:00.000Z');
    const claims = await Promise.all(stores.map((s) => s.claimRun({ ...occurrence, id: randomUUID() })));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await store.listRuns(acct, 'ticker', 10)).toHaveLength(1);
  });

  it('forgets schedules and runs with their script', async () => {
    await store.replaceSchedules(acct, 'ticker', ['* * * * *'], AT);
    expect(await store.claimRun(run(acct, 'ticker', AT))).toBe(true);
    expect(await fixture.workers.deleteScript(acct, 'ticker')).toBe(true);
    expect(await store.listSchedules(acct, 'ticker')).toEqual([]);
    expect(await store.listRuns(acct, 'ticker', 10)).toEqual([]);
  });
}
