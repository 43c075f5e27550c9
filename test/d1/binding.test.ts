import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import {
  accountSubdomain,
  api,
  callFunction,
  enableWorkersDev,
  functionsPort,
  tenant,
  uploadScript,
} from '../workers/helpers.ts';

/** Each route runs one part of D1's binding API and answers JSON (or the error's message, status 500). */
const WORKER = `
export default {
  async fetch(request, env) {
    const db = env.DB;
    const step = new URL(request.url).pathname.slice(1);
    try {
      return Response.json(await run(step, db));
    } catch (error) {
      return new Response(String(error.message), { status: 500 });
    }
  },
};
async function run(step, db) {
  switch (step) {
    case 'setup':
      return db.exec('CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, qty INTEGER, data BLOB)');
    case 'insert':
      return db.prepare('INSERT INTO items (name, qty, data) VALUES (?1, ?2, ?3)').bind('apple', 3, new Uint8Array([1, 2, 3])).run();
    case 'first':
      return { row: await db.prepare('SELECT name, qty FROM items WHERE name = ?').bind('apple').first(), qty: await db.prepare('SELECT qty FROM items').first('qty') };
    case 'all':
      return db.prepare('SELECT id, name, data FROM items ORDER BY id').all();
    case 'raw':
      return { rows: await db.prepare('SELECT name, qty FROM items ORDER BY id').raw(), withColumns: await db.prepare('SELECT name FROM items').raw({ columnNames: true }) };
    case 'batch':
      return db.batch([
        db.prepare('INSERT INTO items (name, qty) VALUES (?, ?)').bind('pear', 1),
        db.prepare('UPDATE items SET qty = qty + 1 WHERE name = ?').bind('apple'),
        db.prepare('SELECT COUNT(*) AS n FROM items'),
      ]);
    case 'batch-fails':
      return db.batch([
        db.prepare('INSERT INTO items (name, qty) VALUES (?, ?)').bind('plum', 1),
        db.prepare('INSERT INTO items (name, qty) VALUES (?, ?)').bind('apple', 1),
      ]);
    case 'count':
      return db.prepare('SELECT COUNT(*) AS n FROM items').first('n');
    case 'session': {
      const session = db.withSession('first-primary');
      await session.prepare('INSERT INTO items (name, qty) VALUES (?, ?)').bind('fig', 7).run();
      const first = session.getBookmark();
      const row = await session.prepare('SELECT qty FROM items WHERE name = ?').bind('fig').first();
      const second = session.getBookmark();
      const resumed = db.withSession(second);
      const again = await resumed.prepare('SELECT qty FROM items WHERE name = ?').bind('fig').first('qty');
      return { first, second, row, again, resumedBookmark: resumed.getBookmark() };
    }
    case 'error':
      return db.prepare('SELECT * FROM nowhere').all();
    case 'exec-error':
      return db.exec('SELECT * FROM nowhere');
    case 'type-error':
      return db.prepare('SELECT ?').bind({ an: 'object' }).all();
    case 'column-error':
      return db.prepare('SELECT name FROM items').first('nope');
    case 'transaction':
      return db.exec('BEGIN TRANSACTION');
  }
  throw new Error('no step ' + step);
}
`;

describe('the d1 binding in a deployed function', () => {
  let ledge: TestLedge;
  let host: string;
  let databaseId: string;

  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 1 } });
    const created = await api(ledge, 'POST', `/accounts/${ledge.accountId}/d1/database`, { name: 'binding-db' });
    databaseId = (created.body.result as { uuid: string }).uuid;
    const upload = await uploadScript(ledge, 'd1-app', {
      modules: { 'index.js': WORKER },
      metadata: { bindings: [{ type: 'd1', name: 'DB', id: databaseId }] },
    });
    expect(upload.status, JSON.stringify(upload.body.errors)).toBe(200);
    expect((await enableWorkersDev(ledge, 'd1-app')).status).toBe(200);
    host = `d1-app.${await accountSubdomain(ledge)}.localhost`;
  });
  afterAll(async () => ledge?.close());

  const call = async (step: string) => {
    const answer = await callFunction(functionsPort(ledge), host, `/${step}`);
    return { status: answer.status, text: answer.text, json: () => JSON.parse(answer.text) as Record<string, unknown> };
  };

  it('prepare, bind, run, first, all, raw and exec', async () => {
    const setup = await call('setup');
    expect(setup.status, setup.text).toBe(200);
    expect(setup.json()).toMatchObject({ count: 1 });
    const inserted = await call('insert');
    expect(inserted.json()).toMatchObject({ success: true, meta: { changes: 1, last_row_id: 1, changed_db: true } });
    expect((await call('first')).json()).toEqual({ row: { name: 'apple', qty: 3 }, qty: 3 });
    expect((await call('all')).json()).toMatchObject({
      success: true,
      results: [{ id: 1, name: 'apple', data: [1, 2, 3] }],
    });
    expect((await call('raw')).json()).toEqual({ rows: [['apple', 3]], withColumns: [['name'], ['apple']] });
  });

  it('batch runs in one transaction: a failing statement rolls the whole batch back', async () => {
    const batch = (await call('batch')).json() as unknown as { results: unknown[] }[];
    expect(batch[2]!.results).toEqual([{ n: 2 }]);
    const failed = await call('batch-fails');
    expect(failed.status).toBe(500);
    expect(failed.text).toBe(
      'D1_ERROR: UNIQUE constraint failed: items.name: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_UNIQUE)',
    );
    expect((await call('count')).text).toBe('2');
  });

  it('withSession carries bookmarks that only move forward', async () => {
    const session = (await call('session')).json() as {
      first: string;
      second: string;
      row: unknown;
      again: number;
      resumedBookmark: string;
    };
    expect(session.row).toEqual({ qty: 7 });
    expect(session.again).toBe(7);
    expect(typeof session.first).toBe('string');
    expect(session.second >= session.first).toBe(true);
    expect(session.resumedBookmark >= session.second).toBe(true);
  });

  it("answers D1's error messages", async () => {
    expect((await call('error')).text).toBe('D1_ERROR: no such table: nowhere: SQLITE_ERROR');
    expect((await call('exec-error')).text).toBe(
      'D1_EXEC_ERROR: Error in line 1: SELECT * FROM nowhere: no such table: nowhere: SQLITE_ERROR',
    );
    expect((await call('type-error')).text).toBe(
      "D1_TYPE_ERROR: Type 'object' not supported for value '[object Object]'",
    );
    expect((await call('column-error')).text).toBe('D1_COLUMN_NOTFOUND: Column not found (nope)');
    expect((await call('transaction')).text).toMatch(/^D1_EXEC_ERROR: .*state\.storage\.transaction/);
  });

  it('what the function wrote, the API reads', async () => {
    const answer = await api(ledge, 'POST', `/accounts/${ledge.accountId}/d1/database/${databaseId}/query`, {
      sql: 'SELECT name FROM items ORDER BY name',
    });
    expect((answer.body.result as { results: unknown[] }[])[0]!.results).toEqual([
      { name: 'apple' },
      { name: 'fig' },
      { name: 'pear' },
    ]);
  });

  it("another account's script cannot bind the database: Cloudflare's error at deploy", async () => {
    const other = await tenant(ledge, 'Intruder');
    const upload = await uploadScript(other, 'steal', {
      modules: { 'index.js': WORKER },
      metadata: { bindings: [{ type: 'd1', name: 'DB', id: databaseId }] },
    });
    expect(upload.status).toBe(400);
    expect(upload.body.errors[0]).toMatchObject({ code: 10181 });
    expect(upload.body.errors[0]!.message).toContain(`references database '${databaseId}' which was not found`);
    const malformed = await uploadScript(other, 'steal', {
      modules: { 'index.js': WORKER },
      metadata: { bindings: [{ type: 'd1', name: 'DB', id: '../../etc' }] },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0]).toMatchObject({ code: 10021 });
  });
});
