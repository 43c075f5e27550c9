import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../src/db/index.ts';
import { tempDir } from '../helpers/ledge.ts';

let dir: string;
let db: SqliteDatabase;
afterEach(async () => {
  await db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
/** A fresh database file with one table `t (n INTEGER PRIMARY KEY)`. */
const open = async () => {
  dir = tempDir('ledge-db-');
  db = new SqliteDatabase(join(dir, 'ledge.db'));
  await db.exec('CREATE TABLE t (n INTEGER PRIMARY KEY)');
  return db;
};

describe('SqliteDatabase.durable (group commit of the WAL)', () => {
  it('shares one sync among commits made while another sync runs', async () => {
    await open();
    await db.run('INSERT INTO t (n) VALUES (0)');
    const first = db.durable();
    // Committed after the first sync started: they need a later one, and all of them share it.
    const later: Promise<void>[] = [];
    for (let i = 0; i < 50; i++) {
      await db.run('INSERT INTO t (n) VALUES (?)', [i + 1]);
      later.push(db.durable());
    }
    await Promise.all([first, ...later]);
    expect(db.walSyncs).toBe(2);
    await db.durable();
    expect(db.walSyncs).toBe(3);
    // What was acknowledged is readable by another connection (it went through the WAL).
    const reader = new DatabaseSync(join(dir, 'ledge.db'));
    expect(reader.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 51 });
    reader.close();
  });

  it('resolves after close without touching a closed descriptor', async () => {
    await open();
    await db.run('INSERT INTO t (n) VALUES (1)');
    const pending = db.durable();
    await db.close();
    await expect(pending).resolves.toBeUndefined();
    await expect(db.durable()).resolves.toBeUndefined();
  });
});

describe('SqliteDatabase.transaction (transactions asked for together commit together)', () => {
  const committed = () => {
    const reader = new DatabaseSync(join(dir, 'ledge.db'));
    const rows = reader
      .prepare('SELECT n FROM t ORDER BY n')
      .all()
      .map((r) => Number(r['n']));
    reader.close();
    return rows;
  };

  it('shares one commit among transactions asked for in one turn, and rolls back a failing one alone', async () => {
    await open();
    const outside = new DatabaseSync(join(dir, 'ledge.db'), { readOnly: true });
    const seenOutside: number[] = [];
    const outcomes = await Promise.allSettled(
      [1, 2, 3, 4].map((n) =>
        db.transaction(async (tx) => {
          await tx.run('INSERT INTO t (n) VALUES (?)', [n]);
          // Another connection sees none of the rows while the last one runs: one transaction, not yet committed.
          if (n === 4)
            seenOutside.push(
              ...outside
                .prepare('SELECT n FROM t')
                .all()
                .map((r) => Number(r['n'])),
            );
          if (n === 2) throw new Error('two fails');
          return n;
        }),
      ),
    );
    outside.close();
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([
      1,
      'two fails',
      3,
      4,
    ]);
    expect(seenOutside).toEqual([]);
    expect(committed()).toEqual([1, 3, 4]);
  });

  it('fails only the transaction of a batch that hits a duplicate key', async () => {
    await open();
    await db.run('INSERT INTO t (n) VALUES (10)');
    const results = await Promise.allSettled([
      db.transaction((tx) => tx.run('INSERT INTO t (n) VALUES (11)')),
      db.transaction((tx) => tx.run('INSERT INTO t (n) VALUES (10)')),
      db.transaction((tx) => tx.run('INSERT INTO t (n) VALUES (12)')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(committed()).toEqual([10, 11, 12]);
  });

  it('fails the ones before a transaction that lost the whole batch, and runs the rest in a new one', async () => {
    await open();
    const outcomes = await Promise.allSettled([
      db.transaction((tx) => tx.run('INSERT INTO t (n) VALUES (1)')),
      db.transaction(async (tx) => {
        await tx.run('INSERT INTO t (n) VALUES (2)');
        // What SQLite does itself on a full disk or an I/O error: the whole transaction is gone.
        await tx.exec('ROLLBACK');
        throw new Error('disk full');
      }),
      db.transaction((tx) => tx.run('INSERT INTO t (n) VALUES (3)')),
    ]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? 'ok' : (o.reason as Error).message))).toEqual([
      'disk full',
      'disk full',
      'ok',
    ]);
    expect(committed()).toEqual([3]);
  });
});
