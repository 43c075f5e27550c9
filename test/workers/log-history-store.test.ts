import { afterEach, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../src/db/index.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { workerMigrations } from '../../src/workers/index.ts';
import { SharedLogHistory } from '../../src/workers/log-history.ts';
import { SqlLogHistoryStore } from '../../src/workers/log-history-store.ts';
import { accountMigrations } from '../../src/accounts/index.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../helpers/backends.ts';
import { systemClock } from '../../src/shared/clock.ts';

/**
 * Issue 26 point 5, with several nodes on one database: a history read used to fetch up to 99,999 rows in one
 * query and encode them at once; a script's rows were bounded only by age (7 days). Now the history comes in
 * pages, and a script keeps its newest lines only.
 */
describe.each(BACKENDS)('%s: kept function log lines', (backend) => {
  let test: TestDatabase | undefined;
  afterEach(async () => test?.close());

  async function open() {
    test = await openTestDatabase(backend);
    await applyMigrations(test.db, [...accountMigrations, ...workerMigrations], systemClock);
    const store = new SqlLogHistoryStore(test.db);
    const history = new SharedLogHistory(
      { store, logger: createLogger('error', systemClock), gate: async () => true },
      systemClock,
    );
    return { store, history };
  }
  const line = (n: number) => ({ time: new Date(n * 1000).toISOString(), level: 'log', message: [`line ${n}`] });
  const numbers = (text: string) =>
    text
      .split('\n')
      .filter(Boolean)
      .map((l) => Number((JSON.parse(l) as { message: string[] }).message[0]!.slice(5)));

  it('a history of 99,999 lines is no longer one query read and encoded at once: pages of 500, oldest first', async () => {
    const { history } = await open();
    for (let n = 0; n < 1_200; n++) history.add('acct', 'chatty', line(n));
    history.add('acct', 'other', line(5_000));
    const pages: string[] = [];
    for await (const page of history.tail('acct', 'chatty', 1_100)) pages.push(page);
    expect(pages.map((p) => numbers(p).length)).toEqual([500, 500, 100]);
    const got = numbers(pages.join(''));
    expect(got).toEqual(Array.from({ length: 1_100 }, (_, i) => 100 + i));
    // More than there is: all of it; the other script's line is not in it.
    const all: string[] = [];
    for await (const page of history.tail('acct', 'chatty', 99_999)) all.push(page);
    expect(numbers(all.join(''))).toHaveLength(1_200);
    await history.stop();
  });

  it("a script's lines no longer grow without bound: trim keeps its newest, other scripts untouched", async () => {
    const { store, history } = await open();
    for (let n = 0; n < 300; n++) history.add('acct', 'flood', line(n));
    for (let n = 0; n < 10; n++) history.add('acct', 'quiet', line(n));
    await history.flush();
    expect(await store.trim('acct', 'flood', 100)).toBe(200);
    expect(await store.trim('acct', 'flood', 100)).toBe(0);
    const kept: string[] = [];
    for await (const page of history.tail('acct', 'flood', 1_000)) kept.push(page);
    expect(numbers(kept.join(''))).toEqual(Array.from({ length: 100 }, (_, i) => 200 + i));
    const quiet: string[] = [];
    for await (const page of history.tail('acct', 'quiet', 1_000)) quiet.push(page);
    expect(numbers(quiet.join(''))).toHaveLength(10);
    await history.stop();
  });
});
