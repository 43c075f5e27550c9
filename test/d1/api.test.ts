import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { api, tenant } from '../workers/helpers.ts';

/** D1's v4 API on a real server, its databases in the account's engine process (workerd's d1.js). */
describe('D1 API', () => {
  let ledge: TestLedge;
  let other: TestLedge;
  let base: string;

  beforeAll(async () => {
    ledge = await startLedge({
      flags: { functionsProcesses: 1 },
      env: { LEDGE_D1_MAX_DATABASES_PER_ACCOUNT: '3', LEDGE_D1_MAX_DATABASE_BYTES: String(256 * 1024) },
    });
    other = await tenant(ledge, 'Other');
    base = `/accounts/${ledge.accountId}/d1/database`;
  });
  afterAll(async () => ledge?.close());

  const create = async (name: string, as: TestLedge = ledge) =>
    api(as, 'POST', `/accounts/${as.accountId}/d1/database`, { name });

  it('creates, lists, gets by id or name, and deletes databases, with Cloudflare’s errors', async () => {
    const created = await create('app-db');
    expect(created.status, JSON.stringify(created.body.errors)).toBe(200);
    const db = created.body.result as { uuid: string; name: string; created_at: string; version: string };
    expect(db).toMatchObject({ name: 'app-db', version: 'production', num_tables: 0, file_size: 0 });
    expect(db.uuid).toMatch(/^[0-9a-f-]{36}$/);

    const duplicate = await create('app-db');
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.errors[0]!.code).toBe(7502);
    const bad = await create('no spaces');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]!.code).toBe(7400);

    const listed = await api(ledge, 'GET', base);
    expect((listed.body.result as { name: string }[]).map((d) => d.name)).toEqual(['app-db']);
    expect(listed.body.result_info).toMatchObject({ count: 1, total_count: 1 });
    const byName = await api(ledge, 'GET', `${base}/app-db`);
    expect(byName.body.result).toMatchObject({ uuid: db.uuid, num_tables: 0 });
    expect((await api(ledge, 'GET', `${base}/${db.uuid}`)).body.result).toMatchObject({ name: 'app-db' });
    // One copy: read replication stays "disabled", and asking for more is a clear 400.
    const replicated = await api(ledge, 'PATCH', `${base}/${db.uuid}`, { read_replication: { mode: 'auto' } });
    expect(replicated.status).toBe(400);
    expect(replicated.body.errors[0]).toMatchObject({ code: 7400 });
    expect(replicated.body.errors[0]!.message).toContain('"auto" is not available');
    const kept = await api(ledge, 'PUT', `${base}/${db.uuid}`, { read_replication: { mode: 'disabled' } });
    expect(kept.body.result).toMatchObject({ read_replication: { mode: 'disabled' } });

    // Another account sees nothing of it, by id or by name, and may use the same name.
    const foreign = await api(other, 'GET', `/accounts/${other.accountId}/d1/database/${db.uuid}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.errors[0]!.code).toBe(7404);
    expect(
      (await api(other, 'POST', `/accounts/${other.accountId}/d1/database/${db.uuid}/query`, { sql: 'SELECT 1' }))
        .status,
    ).toBe(404);
    expect((await create('app-db', other)).status).toBe(200);

    expect((await api(ledge, 'DELETE', `${base}/${db.uuid}`)).status).toBe(200);
    expect((await api(ledge, 'GET', `${base}/${db.uuid}`)).status).toBe(404);
    expect((await api(ledge, 'GET', base)).body.result).toEqual([]);
  });

  it('runs query and raw: parameters, several statements, meta', async () => {
    const db = (await create('queries')).body.result as { uuid: string };
    const q = `${base}/${db.uuid}`;
    const setup = await api(ledge, 'POST', `${q}/query`, {
      sql: "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, score REAL); INSERT INTO users (name, score) VALUES ('ada', 1.5), ('bob', 2);",
    });
    expect(setup.status, JSON.stringify(setup.body.errors)).toBe(200);
    const [createResult, insertResult] = setup.body.result as { success: boolean; meta: Record<string, number> }[];
    expect(createResult!.success).toBe(true);
    expect(insertResult!.meta).toMatchObject({ changes: 2, last_row_id: 2, rows_written: 2 });
    expect(typeof insertResult!.meta['duration']).toBe('number');
    expect(insertResult!.meta['size_after']).toBeGreaterThan(0);

    const selected = await api(ledge, 'POST', `${q}/query`, {
      sql: 'SELECT * FROM users WHERE score > ?',
      params: ['1.6'],
    });
    const [result] = selected.body.result as { results: unknown[]; meta: Record<string, number> }[];
    expect(result!.results).toEqual([{ id: 2, name: 'bob', score: 2 }]);
    expect(result!.meta['rows_read']).toBeGreaterThan(0);

    const raw = await api(ledge, 'POST', `${q}/raw`, { sql: 'SELECT id, name FROM users ORDER BY id' });
    expect((raw.body.result as { results: unknown }[])[0]!.results).toEqual({
      columns: ['id', 'name'],
      rows: [
        [1, 'ada'],
        [2, 'bob'],
      ],
    });

    const batch = await api(ledge, 'POST', `${q}/query`, {
      batch: [
        { sql: 'INSERT INTO users (name) VALUES (?)', params: ['cy'] },
        { sql: 'SELECT COUNT(*) AS n FROM users' },
      ],
    });
    expect((batch.body.result as { results: unknown[] }[])[1]!.results).toEqual([{ n: 3 }]);

    // A statement SQLite refuses: D1's error (7500, SQLite's words), never a 500; the call rolled back whole.
    const failed = await api(ledge, 'POST', `${q}/query`, {
      sql: "INSERT INTO users (name) VALUES ('dd'); SELECT * FROM nope",
    });
    expect(failed.status).toBe(400);
    expect(failed.body.errors[0]).toMatchObject({ code: 7500, message: 'no such table: nope: SQLITE_ERROR' });
    const count = await api(ledge, 'POST', `${q}/query`, { sql: 'SELECT COUNT(*) AS n FROM users' });
    expect((count.body.result as { results: unknown[] }[])[0]!.results).toEqual([{ n: 3 }]);

    // What a Durable Object refuses, D1 refuses: its own transactions.
    const begin = await api(ledge, 'POST', `${q}/query`, { sql: 'BEGIN TRANSACTION' });
    expect(begin.status).toBe(400);
    expect(begin.body.errors[0]!.code).toBe(7500);
    for (const body of [{}, { sql: 42 }, { sql: 'SELECT ?; SELECT ?', params: [1, 2] }, { batch: [] }]) {
      const refused = await api(ledge, 'POST', `${q}/query`, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.errors[0]!.code).toBe(7400);
    }
    expect((await api(ledge, 'GET', q)).body.result).toMatchObject({ num_tables: 1 });
    // Bodies that are no JSON, or JSON too deep, are the client's mistake: 400, never a 500.
    for (const body of ['{"sql": ', 'not json', '['.repeat(200) + ']'.repeat(200)]) {
      const response = await fetch(`${ledge.apiUrl}${q}/query`, {
        method: 'POST',
        headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
        body,
      });
      expect(response.status, body.slice(0, 20)).toBe(400);
    }
  });

  it('imports a file as wrangler uploads it (all or nothing) and exports the database', async () => {
    const db = (await create('transfer')).body.result as { uuid: string };
    const q = `${base}/${db.uuid}`;
    const importFile = async (sql: string) => {
      const etag = createHash('md5').update(sql).digest('hex');
      const init = await api(ledge, 'POST', `${q}/import`, { action: 'init', etag });
      const { upload_url: uploadUrl, filename } = init.body.result as { upload_url: string; filename: string };
      const put = await fetch(uploadUrl, { method: 'PUT', body: sql });
      expect(put.status).toBe(200);
      expect(put.headers.get('etag')).toBe(`"${etag}"`);
      return api(ledge, 'POST', `${q}/import`, { action: 'ingest', etag, filename });
    };
    const done = await importFile(
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);\nINSERT INTO notes (body) VALUES ('one; two');\nINSERT INTO notes (body) VALUES ('three');\n",
    );
    expect(done.body.result).toMatchObject({
      success: true,
      status: 'complete',
      result: { num_queries: 3 },
    });
    expect((done.body.result as { result: { final_bookmark: string } }).result.final_bookmark).not.toBe('');

    const failed = await importFile("INSERT INTO notes (body) VALUES ('four');\nINSERT INTO missing VALUES (1);\n");
    expect(failed.body.result).toMatchObject({
      success: false,
      status: 'error',
      error: 'no such table: missing: SQLITE_ERROR',
    });
    const count = await api(ledge, 'POST', `${q}/query`, { sql: 'SELECT COUNT(*) AS n FROM notes' });
    expect((count.body.result as { results: unknown[] }[])[0]!.results).toEqual([{ n: 2 }]);

    const exported = await api(ledge, 'POST', `${q}/export`, { output_format: 'polling', dump_options: {} });
    const { status, result } = exported.body.result as { status: string; result: { signed_url: string } };
    expect(status).toBe('complete');
    const sql = await (await fetch(result.signed_url)).text();
    expect(sql).toContain('CREATE TABLE notes');
    expect(sql).toContain('INSERT INTO "notes" ("id","body") VALUES(1,\'one; two\');');
    expect((await fetch(`${ledge.apiUrl}/d1/exports/not-a-token`)).status).toBe(404);
  });

  it('enforces the account’s limits with Cloudflare’s codes: databases, then a database’s size', async () => {
    // Three per account here (LEDGE_D1_MAX_DATABASES_PER_ACCOUNT); "queries" and "transfer" exist.
    const big = (await create('big')).body.result as { uuid: string };
    const tooMany = await create('one-too-many');
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.errors[0]!.code).toBe(7406);

    const q = `${base}/${big.uuid}`;
    await api(ledge, 'POST', `${q}/query`, { sql: 'CREATE TABLE blobs (b BLOB)' });
    let full: Awaited<ReturnType<typeof api>> | undefined;
    for (let i = 0; i < 40 && !full; i++) {
      const answer = await api(ledge, 'POST', `${q}/query`, { sql: 'INSERT INTO blobs VALUES (randomblob(16000))' });
      if (answer.status !== 200) full = answer;
    }
    expect(full?.status).toBe(400);
    expect(full?.body.errors[0]!.code).toBe(7500);
    expect(full?.body.errors[0]!.message).toBe('database or disk is full: SQLITE_FULL');
    // A full database still reads and deletes.
    expect((await api(ledge, 'POST', `${q}/query`, { sql: 'SELECT COUNT(*) FROM blobs' })).status).toBe(200);
    expect((await api(ledge, 'POST', `${q}/query`, { sql: 'DELETE FROM blobs' })).status).toBe(200);
    const info = (await api(ledge, 'GET', q)).body.result as { file_size: number };
    expect(info.file_size).toBeLessThanOrEqual(256 * 1024);
  });
});
