import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { poll } from '../helpers/wait.ts';
import { api, tenant } from '../workers/helpers.ts';

/**
 * Each account's databases live in that account's engine process (docs/d1.md): one account's long query or
 * crashed engine leaves another's databases answering, and a crashed engine comes back with every committed row.
 */
describe('D1 engine processes: one per account, failing alone', () => {
  let ledge: TestLedge;
  let other: TestLedge;
  let mine: string;
  let theirs: string;

  const create = async (as: TestLedge, name: string) => {
    const created = await api(as, 'POST', `/accounts/${as.accountId}/d1/database`, { name });
    expect(created.status, JSON.stringify(created.body.errors)).toBe(200);
    return `/accounts/${as.accountId}/d1/database/${(created.body.result as { uuid: string }).uuid}`;
  };
  const rows = async (as: TestLedge, database: string) => {
    const answer = await api(as, 'POST', `${database}/query`, { sql: 'SELECT COUNT(*) AS n FROM t' });
    expect(answer.status, JSON.stringify(answer.body.errors)).toBe(200);
    return (answer.body.result as { results: { n: number }[] }[])[0]!.results[0]!.n;
  };

  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 1 } });
    other = await tenant(ledge, 'Neighbour');
    mine = await create(ledge, 'mine');
    theirs = await create(other, 'theirs');
    for (const [as, database] of [
      [ledge, mine],
      [other, theirs],
    ] as const) {
      const setup = await api(as, 'POST', `${database}/query`, {
        sql: 'CREATE TABLE t (v); INSERT INTO t VALUES (1), (2), (3)',
      });
      expect(setup.status, JSON.stringify(setup.body.errors)).toBe(200);
    }
  });
  afterAll(async () => ledge?.close());

  it('runs each account in a process of its own', () => {
    const engines = ledge.server.platform.engines;
    const [a, b] = [engines.pid(ledge.accountId), engines.pid(other.accountId)];
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);
    expect(a).not.toBe(b);
  });

  it('creates and deletes databases without restarting the process, whose other databases keep their rows', async () => {
    const engines = ledge.server.platform.engines;
    const before = engines.pid(ledge.accountId);
    const another = await create(ledge, 'another');
    const made = await api(ledge, 'POST', `${another}/query`, { sql: 'CREATE TABLE u (v); INSERT INTO u VALUES (1)' });
    expect(made.status, JSON.stringify(made.body.errors)).toBe(200);
    expect((await api(ledge, 'DELETE', another)).status).toBe(200);
    expect(engines.pid(ledge.accountId)).toBe(before);
    expect(await rows(ledge, mine)).toBe(3);
  });

  it("one account's long query does not hold up another's queries", async () => {
    // Counts to 20 million in SQLite: it holds its account's engine (one thread) for a long while.
    let longDone = false;
    const long = api(ledge, 'POST', `${mine}/query`, {
      sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000000) SELECT COUNT(*) AS n FROM c',
    }).then((answer) => {
      longDone = true;
      return answer;
    });
    for (let i = 0; i < 20; i++) expect(await rows(other, theirs)).toBe(3);
    expect(longDone).toBe(false);
    expect((await long).status).toBe(200);
  });

  it('a crashed engine fails alone and comes back with every committed row', async () => {
    const engines = ledge.server.platform.engines;
    const crashed = engines.pid(ledge.accountId)!;
    const neighbour = engines.pid(other.accountId);
    process.kill(crashed, 'SIGKILL');
    expect(await rows(other, theirs)).toBe(3);
    const back = await poll(
      async () => {
        const pid = engines.pid(ledge.accountId);
        return pid !== undefined && pid !== crashed ? pid : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(back).toBeGreaterThan(0);
    expect(await rows(ledge, mine)).toBe(3);
    expect(engines.pid(other.accountId)).toBe(neighbour);
  });
});
