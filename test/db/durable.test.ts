import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../src/db/index.ts';
import { tempDir } from '../helpers/ledge.ts';

describe('SqliteDatabase.durable (group commit of the WAL)', () => {
  let dir: string;
  let db: SqliteDatabase;
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const open = async () => {
    dir = tempDir('ledge-db-');
    db = new SqliteDatabase(join(dir, 'ledge.db'));
    await db.exec('CREATE TABLE t (n INTEGER PRIMARY KEY)');
    return db;
  };

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
