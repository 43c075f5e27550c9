import { afterEach, describe, expect, it } from 'vitest';
import { applyMigrations, dialects, type SqlDatabase } from '../../src/db/index.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../helpers/backends.ts';
import { systemClock } from '../../src/shared/clock.ts';

const SCHEMA = {
  id: 'test/0001_counters',
  sql: {
    sqlite: `CREATE TABLE counters (name TEXT PRIMARY KEY, n INTEGER NOT NULL, big INTEGER, body BLOB);
             CREATE TABLE jobs (id INTEGER PRIMARY KEY, claimed_by TEXT);`,
    postgres: `CREATE TABLE counters (name TEXT PRIMARY KEY, n BIGINT NOT NULL, big BIGINT, body BYTEA);
               CREATE TABLE jobs (id BIGINT PRIMARY KEY, claimed_by TEXT);`,
  },
};

describe.each(BACKENDS)('the persistence contract on %s', (backend) => {
  let test: TestDatabase;
  let db: SqlDatabase;
  const open = async () => {
    test = await openTestDatabase(backend);
    db = test.db;
    await applyMigrations(db, [SCHEMA], systemClock);
  };
  afterEach(async () => test?.close());

  it('reads back numbers, big integers, text, nulls and bytes the same way', async () => {
    await open();
    const body = new Uint8Array([0, 1, 2, 255]);
    await db.run('INSERT INTO counters (name, n, big, body) VALUES (?, ?, ?, ?)', ['a', 1, 5 * 2 ** 30, body]);
    const row = await db.get<{ name: string; n: number; big: number; body: Uint8Array }>(
      'SELECT name, n, big, body FROM counters WHERE name = ?',
      ['a'],
    );
    expect(row?.n).toBe(1);
    expect(row?.big).toBe(5 * 2 ** 30);
    expect([...row!.body]).toEqual([0, 1, 2, 255]);
    expect(await db.get('SELECT count(*) AS c FROM counters')).toEqual({ c: 1 });
    expect(await db.get('SELECT name FROM counters WHERE name = ?', ['missing'])).toBeUndefined();
    expect(await db.run('UPDATE counters SET n = n + 1 WHERE name = ?', ['a'])).toEqual({ changes: 1 });
  });

  it('leaves a ? inside a quoted string alone', async () => {
    await open();
    await db.run(`INSERT INTO counters (name, n) VALUES ('what?', ?)`, [3]);
    expect(await db.get(`SELECT n FROM counters WHERE name = 'what?' AND n = ?`, [3])).toEqual({ n: 3 });
  });

  it('commits a transaction that resolves and rolls back one that throws', async () => {
    await open();
    await db.transaction(async (tx) => {
      await tx.run('INSERT INTO counters (name, n) VALUES (?, ?)', ['kept', 1]);
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.run('INSERT INTO counters (name, n) VALUES (?, ?)', ['lost', 1]);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await db.all('SELECT name FROM counters ORDER BY name')).toEqual([{ name: 'kept' }]);
  });

  it('rolls back a nested transaction alone', async () => {
    await open();
    await db.transaction(async (tx) => {
      await tx.run('INSERT INTO counters (name, n) VALUES (?, ?)', ['outer', 1]);
      await tx
        .transaction(async (inner) => {
          await inner.run('INSERT INTO counters (name, n) VALUES (?, ?)', ['inner', 1]);
          throw new Error('inner fails');
        })
        .catch(() => undefined);
    });
    expect(await db.all('SELECT name FROM counters ORDER BY name')).toEqual([{ name: 'outer' }]);
  });

  it('does not show a transaction’s writes to others before it commits', async () => {
    await open();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const wrote = new Promise<void>((resolve) => (inserted = resolve));
    const writer = db.transaction(async (tx) => {
      await tx.run('INSERT INTO counters (name, n) VALUES (?, ?)', ['pending', 1]);
      inserted();
      await held;
    });
    await wrote;
    expect(await db.get('SELECT name FROM counters WHERE name = ?', ['pending'])).toBeUndefined();
    release();
    await writer;
    expect(await db.get('SELECT name FROM counters WHERE name = ?', ['pending'])).toEqual({ name: 'pending' });
  });

  it('serialises two transactions racing for one precondition (no lost update, no double create)', async () => {
    await open();
    const other = test.reopen();
    // Each checks that the row is absent, then creates it: exactly one may win.
    const create = (handle: SqlDatabase, who: string) =>
      handle.transaction(async (tx) => {
        await tx.lock('counter:race');
        const existing = await tx.get('SELECT name FROM counters WHERE name = ?', ['race']);
        if (existing) return false;
        // Holds the transaction open so that the other one overlaps it (a barrier would deadlock SQLite's single
        // writer): part of the race this test makes, not a wait for a result.
        await new Promise((resolve) => setTimeout(resolve, 20));
        await tx.run('INSERT INTO counters (name, n, big) VALUES (?, ?, ?)', ['race', 0, who.length]);
        return true;
      });
    const results = await Promise.all([create(db, 'one'), create(other, 'three')]);
    expect(results.filter(Boolean)).toHaveLength(1);
    // Read-modify-write increments from two handles: none lost.
    const increment = (handle: SqlDatabase) =>
      handle.transaction(async (tx) => {
        const row = await tx.get<{ n: number }>(
          `SELECT n FROM counters WHERE name = ?${dialects[handle.dialect].forUpdate}`,
          ['race'],
        );
        // Holds the transaction open a moment (see above).
        await new Promise((resolve) => setTimeout(resolve, 1));
        await tx.run('UPDATE counters SET n = ? WHERE name = ?', [row!.n + 1, 'race']);
      });
    await Promise.all(Array.from({ length: 20 }, (_, i) => increment(i % 2 ? db : other)));
    expect(await db.get('SELECT n FROM counters WHERE name = ?', ['race'])).toEqual({ n: 20 });
  });

  it('lets two claimers share work without taking the same row', async () => {
    await open();
    const other = test.reopen();
    for (let id = 1; id <= 40; id++) await db.run('INSERT INTO jobs (id) VALUES (?)', [id]);
    const claim = (handle: SqlDatabase, who: string) =>
      handle.transaction(async (tx) => {
        const rows = await tx.all<{ id: number }>(
          `SELECT id FROM jobs WHERE claimed_by IS NULL ORDER BY id LIMIT 5${dialects[handle.dialect].skipLocked}`,
        );
        for (const row of rows) await tx.run('UPDATE jobs SET claimed_by = ? WHERE id = ?', [who, row.id]);
        return rows.map((row) => row.id);
      });
    const claimed: number[] = [];
    for (let round = 0; round < 4; round++) {
      const [a, b] = await Promise.all([claim(db, 'a'), claim(other, 'b')]);
      claimed.push(...a, ...b);
    }
    expect(claimed).toHaveLength(40);
    expect(new Set(claimed).size).toBe(40);
  });

  it('refuses a handle used after its transaction ended, and a database statement inside its own transaction', async () => {
    await open();
    let leaked: { run: SqlDatabase['run'] } | undefined;
    await db.transaction(async (tx) => {
      leaked = tx;
    });
    await expect(leaked!.run('DELETE FROM counters')).rejects.toThrow(/ended/);
    if (backend === 'sqlite') {
      await expect(db.transaction(async () => db.run('DELETE FROM counters'))).rejects.toThrow(/transaction handle/);
    }
  });

  it('applies each migration once when several nodes start together', async () => {
    await open();
    const nodes = [test.reopen(), test.reopen(), test.reopen()];
    const extra = [
      { id: 'test/0002_more', sql: 'CREATE TABLE more (id TEXT PRIMARY KEY)' },
      { id: 'test/0003_more_again', sql: 'ALTER TABLE more ADD COLUMN note TEXT' },
    ];
    const ran = await Promise.all(nodes.map((node) => applyMigrations(node, [SCHEMA, ...extra], systemClock)));
    expect(ran.flat().sort()).toEqual(['test/0002_more', 'test/0003_more_again']);
    expect(await db.all('SELECT id FROM schema_migrations ORDER BY id')).toHaveLength(3);
  });

  it('reads JSON arrays passed as one parameter', async () => {
    await open();
    for (const name of ['a', 'b', 'c']) await db.run('INSERT INTO counters (name, n) VALUES (?, ?)', [name, 1]);
    const dialect = dialects[db.dialect];
    const rows = await db.all(`SELECT name FROM counters WHERE ${dialect.inJsonArray('name', 'text')} ORDER BY name`, [
      JSON.stringify(['a', 'c', 'x']),
    ]);
    expect(rows).toEqual([{ name: 'a' }, { name: 'c' }]);
    await db.run(`INSERT INTO jobs (id) SELECT CAST(value AS BIGINT) FROM ${dialect.jsonArrayRows}`, [
      JSON.stringify([7, 8]),
    ]);
    expect(
      await db.all(`SELECT id FROM jobs WHERE ${dialect.inJsonArray('id', 'integer')} ORDER BY id`, ['[8]']),
    ).toEqual([{ id: 8 }]);
  });
});
