import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/shared/clock.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { EngineHost } from '../../src/workerd/engine-host.ts';
import { D1_DATABASE_HEADER, engineKinds, KV_NAMESPACE_HEADER } from '../../src/workerd/config/engines/index.ts';
import { waitFor } from '../helpers/wait.ts';

const ACCOUNT_A = 'a'.repeat(32);
const ACCOUNT_B = 'b'.repeat(32);
const NS = '0123456789abcdef0123456789abcdef';
const DB = '01234567-89ab-cdef-0123-456789abcdef';

describe('the engine host: one workerd per account running the bundled KV and D1 engines', () => {
  let dir: string;
  let host: EngineHost;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledge-eng-'));
    host = new EngineHost({
      runtimeDir: join(dir, 'runtime'),
      dataDir: join(dir, 'engines'),
      kinds: engineKinds({ d1: { maxDatabaseBytes: 1024 * 1024 } }),
      logger: createLogger('error', systemClock),
      clock: systemClock,
      accounts: async () => [ACCOUNT_A],
    });
    await host.start();
  });
  afterAll(async () => {
    await host.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function kv(account: string, method: string, path: string, body?: string, namespace = NS) {
    const agent = new Agent({ connect: { socketPath: host.socketPath('kv', account) } });
    try {
      const response = await request(`http://kv${path}`, {
        method,
        body,
        headers: namespace === '' ? {} : { [KV_NAMESPACE_HEADER]: namespace },
        dispatcher: agent,
      });
      return { status: response.statusCode, text: await response.body.text() };
    } finally {
      await agent.close();
    }
  }

  it('keeps an account apart from another, and its data across a crash of its process', async () => {
    expect((await kv(ACCOUNT_A, 'PUT', '/greeting', 'hello')).status).toBe(200);
    expect(await kv(ACCOUNT_A, 'GET', '/greeting')).toEqual({ status: 200, text: 'hello' });
    // The same namespace id in another account's process is another namespace's data (none).
    await host.ensure(ACCOUNT_B);
    expect((await kv(ACCOUNT_B, 'GET', '/greeting')).status).toBe(404);
    // A request without a valid namespace id reaches no namespace.
    expect((await kv(ACCOUNT_A, 'GET', '/greeting', undefined, '')).status).toBe(400);
    expect((await kv(ACCOUNT_A, 'GET', '/greeting', undefined, '../x')).status).toBe(400);

    const pid = host.pid(ACCOUNT_A)!;
    const other = host.pid(ACCOUNT_B);
    process.kill(pid, 'SIGKILL');
    await waitFor(() => host.pid(ACCOUNT_A) !== undefined && host.pid(ACCOUNT_A) !== pid, 'the restart');
    await host.ensure(ACCOUNT_A);
    expect(await kv(ACCOUNT_A, 'GET', '/greeting')).toEqual({ status: 200, text: 'hello' });
    expect(host.pid(ACCOUNT_B)).toBe(other);
  });

  it("serves D1 on its own socket in the same process, each kind taking only its own ids' shape", async () => {
    const query = async (database: string, sql: string) => {
      const agent = new Agent({ connect: { socketPath: host.socketPath('d1', ACCOUNT_A) } });
      try {
        const response = await request('http://d1/query?resultsFormat=ROWS_AND_COLUMNS', {
          method: 'POST',
          headers: { 'content-type': 'application/json', [D1_DATABASE_HEADER]: database },
          body: JSON.stringify([{ sql, params: [] }]),
          dispatcher: agent,
        });
        return { status: response.statusCode, text: await response.body.text() };
      } finally {
        await agent.close();
      }
    };
    const pid = host.pid(ACCOUNT_A);
    expect((await query(DB, 'CREATE TABLE t (v); INSERT INTO t VALUES (42)')).status).toBe(200);
    expect((await query(DB, 'SELECT v FROM t')).text).toContain('42');
    // A new database is one more id in the same process: nothing restarts.
    expect((await query(DB.replace('0123', '3210'), 'SELECT 1')).status).toBe(200);
    expect((await query(DB.replace('0123', '3210'), 'SELECT v FROM t')).text).toContain('no such table');
    expect(host.pid(ACCOUNT_A)).toBe(pid);
    // A namespace's id on the D1 socket, a database's on the KV socket, an upper-case UUID: refused.
    expect((await query(NS, 'SELECT 1')).status).toBe(400);
    expect((await query(DB.toUpperCase(), 'SELECT 1')).status).toBe(400);
    expect((await kv(ACCOUNT_A, 'GET', '/greeting', undefined, DB)).status).toBe(400);
  });

  it('keeps values over 64 KiB as blobs', async () => {
    const big = 'x'.repeat(200_000);
    expect((await kv(ACCOUNT_A, 'PUT', '/big', big)).status).toBe(200);
    expect((await kv(ACCOUNT_A, 'GET', '/big')).text).toBe(big);
  });
});
