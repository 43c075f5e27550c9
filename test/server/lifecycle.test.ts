import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { envelopeOf } from '../helpers/envelope.ts';
import { spawnLedge, tempDir, TEST_CREDENTIALS } from '../helpers/ledge.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
const newDir = () => {
  const dir = tempDir();
  dirs.push(dir);
  return dir;
};

describe('ledge server', () => {
  it('first boot: prints one JSON line with the credentials, writes credentials.json 0600, and serves the API', async () => {
    const dataDir = newDir();
    const server = await spawnLedge(dataDir);
    try {
      expect(server.info).toMatchObject({
        account_id: TEST_CREDENTIALS.accountId,
        email: TEST_CREDENTIALS.email,
        api_key: TEST_CREDENTIALS.apiKey,
        api_token: TEST_CREDENTIALS.apiToken,
      });
      expect(server.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/client\/v4$/);
      // Where functions are served: a real port (0 was asked for) on the default domain.
      expect(Number(server.info['functions_port'])).toBeGreaterThan(0);
      expect(server.info['functions_domain']).toBe('localhost');
      const credentialsPath = `${dataDir}/credentials.json`;
      expect(statSync(credentialsPath).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(credentialsPath, 'utf8'))).toMatchObject({
        api_url: server.apiUrl,
        account_id: TEST_CREDENTIALS.accountId,
        api_token: TEST_CREDENTIALS.apiToken,
      });
      expect(statSync(`${dataDir}/secret.key`).mode & 0o777).toBe(0o600);
      const res = await fetch(`${server.apiUrl}/user`, {
        headers: { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` },
      });
      expect(res.status).toBe(200);
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
    }
  });

  // About the embedded default's file; the postgres project runs the rest of this file on PostgreSQL.
  it.skipIf(process.env['LEDGE_TEST_DATABASE'] === 'postgres')(
    'uses SQLite in WAL mode with recorded, versioned migrations',
    async () => {
      const dataDir = newDir();
      const server = await spawnLedge(dataDir);
      await server.stop('SIGINT');
      const db = new DatabaseSync(`${dataDir}/ledge.db`);
      expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
      const ids = db
        .prepare('SELECT id FROM schema_migrations ORDER BY rowid')
        .all()
        .map((r) => r['id']);
      expect(ids).toContain('accounts/0001_initial');
      db.close();
    },
  );

  it('restarts on an existing data dir without creating new credentials, and keeps data', async () => {
    const dataDir = newDir();
    const first = await spawnLedge(dataDir);
    await fetch(`${first.apiUrl}/accounts/${TEST_CREDENTIALS.accountId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` },
      body: JSON.stringify({ name: 'Kept Across Restarts' }),
    });
    expect(await first.stop('SIGTERM')).toBe(0);
    const second = await spawnLedge(dataDir, [], {
      LEDGE_BOOTSTRAP_API_TOKEN: 'a-different-token-that-must-not-be-used',
    });
    try {
      expect(second.info['api_token']).toBeUndefined();
      expect(second.info['account_id']).toBe(TEST_CREDENTIALS.accountId);
      const res = await fetch(`${second.apiUrl}/accounts/${TEST_CREDENTIALS.accountId}`, {
        headers: { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` },
      });
      expect((await envelopeOf(res)).result.name).toBe('Kept Across Restarts');
    } finally {
      await second.stop();
    }
  });

  it('generates random credentials when no bootstrap values are given', async () => {
    const dataDir = newDir();
    const server = await spawnLedge(dataDir, [], {
      LEDGE_BOOTSTRAP_EMAIL: '',
      LEDGE_BOOTSTRAP_API_KEY: '',
      LEDGE_BOOTSTRAP_API_TOKEN: '',
      LEDGE_BOOTSTRAP_ACCOUNT_ID: '',
    }).catch((error) => {
      throw error;
    });
    try {
      expect(server.info['account_id']).toMatch(/^[0-9a-f]{32}$/);
      expect(server.info['api_key']).toMatch(/^[0-9a-f]{37}$/);
      expect(server.info['api_token']!.length).toBeGreaterThanOrEqual(40);
      expect(existsSync(`${dataDir}/credentials.json`)).toBe(true);
    } finally {
      await server.stop();
    }
  });

  it('refuses to start on a port that is taken, with a clear error', async () => {
    const dataDir = newDir();
    const first = await spawnLedge(dataDir);
    const port = new URL(first.apiUrl).port;
    try {
      await expect(spawnLedge(newDir(), ['--port', port])).rejects.toThrow(
        new RegExp(`API port ${port} on 127.0.0.1 is in use`),
      );
    } finally {
      await first.stop();
    }
  });
});
