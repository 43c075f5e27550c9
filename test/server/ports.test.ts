import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/ledge.ts';
import {
  LEDGE_BIN,
  runAs,
  scratchHome,
  startAs,
  userEnv,
  type Running,
  EPHEMERAL_PORT_FLAGS,
} from '../helpers/user-shell.ts';

/**
 * "The first hour", ports and first boot: `ledge server` as a user starts it (the `bin/ledge` wrapper, a
 * scratch HOME, no LEDGE_* variables, the data dir under the working directory) never shares a port with
 * another process, fails at once naming the port, and a failed first start still ends in credentials.
 */
describe('ledge server ports and first boot', () => {
  let home: string;
  let first: Running;
  let firstDir: string;
  let functionsPort: number;
  let apiPort: number;
  const env = () => userEnv(home);
  /** A start that must fail: the whole run, with its time. */
  const failingStart = async (cwd: string, args: string[]) => {
    const started = Date.now();
    const result = await runAs(LEDGE_BIN, ['server', ...args], { cwd, env: env(), timeoutMs: 30_000 });
    return { ...result, ms: Date.now() - started };
  };

  beforeAll(async () => {
    home = scratchHome();
    firstDir = tempDir('ledge-user-');
    first = startAs(LEDGE_BIN, ['server', ...EPHEMERAL_PORT_FLAGS], {
      cwd: firstDir,
      env: env(),
    });
    const [, api] = (await first.waitFor(/API: +http:\/\/127\.0\.0\.1:(\d+)\//))!;
    const [, functions] = (await first.waitFor(/Functions: +http:\/\/\S+:(\d+)\//))!;
    await first.waitFor(/Press Ctrl\+C to stop/);
    apiPort = Number(api);
    functionsPort = Number(functions);
  });
  afterAll(async () => {
    await first?.stop('SIGTERM');
  });

  it('a second server on the functions port of a running one exits 1 at once, naming the port', async () => {
    const cwd = tempDir('ledge-user-');
    const result = await failingStart(cwd, [
      '--port',
      '0',
      '--functions-port',
      String(functionsPort),
      '--traffic-port',
      '0',
      '--traffic-tls-port',
      '0',
      '--s3-api-port',
      '0',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error: functions port ${functionsPort} on 127.0.0.1 is in use by another process`);
    expect(result.stderr).toContain('--functions-port');
    // At once: the time to load the CLI and open the database, never a wait for a timeout.
    expect(result.ms).toBeLessThan(15_000);
    expect(result.stdout).not.toContain('Ledge is running');
    // The first server still serves (its own 404 for a host with no function).
    const res = await fetch(`http://127.0.0.1:${functionsPort}/`, { headers: { host: 'nope.nope.localhost' } });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(first.child.exitCode).toBeNull();
  });

  it('a functions port that another program holds with SO_REUSEPORT is refused too (no lock of ours involved)', async () => {
    // What a reuseport server that is not Ledge looks like: the kernel would let a reuseport socket join it.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const s = require('node:net').createServer(c => c.end('other program\\n'));
         s.listen({ port: 0, host: '127.0.0.1', reusePort: true }, () => console.log(s.address().port));`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const port = Number(await new Promise<string>((r) => createInterface({ input: holder.stdout! }).once('line', r)));
      const cwd = tempDir('ledge-user-');
      const result = await failingStart(cwd, [
        '--port',
        '0',
        '--functions-port',
        String(port),
        '--traffic-port',
        '0',
        '--traffic-tls-port',
        '0',
        '--s3-api-port',
        '0',
      ]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`error: functions port ${port} on 127.0.0.1 is in use by another process`);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('a taken API port: exit 1 naming it; the failed first start leaves no account, so the next one bootstraps', async () => {
    const cwd = tempDir('ledge-user-');
    const result = await failingStart(cwd, [
      '--port',
      String(apiPort),
      '--functions-port',
      '0',
      '--traffic-port',
      '0',
      '--traffic-tls-port',
      '0',
      '--s3-api-port',
      '0',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error: API port ${apiPort} on 127.0.0.1 is in use by another process`);
    expect(result.stderr).toContain('--port');
    expect(result.ms).toBeLessThan(15_000);
    // The data dir exists (database, key) but holds no half-made owner and no credentials.json.
    expect(existsSync(join(cwd, '.ledge/ledge.db'))).toBe(true);
    expect(existsSync(join(cwd, '.ledge/credentials.json'))).toBe(false);

    const second = startAs(LEDGE_BIN, ['server', ...EPHEMERAL_PORT_FLAGS], {
      cwd,
      env: env(),
    });
    try {
      await second.waitFor(/Press Ctrl\+C to stop/);
      const token = second.stdout().match(/API token: +(\S+)/)?.[1];
      expect(token, second.stdout()).toBeDefined();
      const written = JSON.parse(readFileSync(join(cwd, '.ledge/credentials.json'), 'utf8')) as Record<string, string>;
      expect(written['api_token']).toBe(token);
      const user = await fetch(`${written['api_url']}/user`, { headers: { authorization: `Bearer ${token}` } });
      expect(user.status).toBe(200);
    } finally {
      expect((await second.stop('SIGINT')).code).toBe(0);
    }
  });

  it('a failed first start on the functions port also ends in credentials on the next start', async () => {
    const cwd = tempDir('ledge-user-');
    const failed = await failingStart(cwd, [
      '--port',
      '0',
      '--functions-port',
      String(functionsPort),
      '--traffic-port',
      '0',
      '--traffic-tls-port',
      '0',
      '--s3-api-port',
      '0',
    ]);
    expect(failed.code).toBe(1);
    expect(existsSync(join(cwd, '.ledge/credentials.json'))).toBe(false);
    const next = startAs(LEDGE_BIN, ['server', '--json', ...EPHEMERAL_PORT_FLAGS], { cwd, env: env() });
    try {
      const [line] = (await next.waitFor(/^\{.*\}$/m))!;
      const ready = JSON.parse(line) as Record<string, string>;
      expect(ready['api_token']).toBeDefined();
      expect(ready['credentials_file']).toBe(join(cwd, '.ledge/credentials.json'));
      expect(JSON.parse(readFileSync(ready['credentials_file']!, 'utf8'))).toMatchObject({
        api_token: ready['api_token'],
        account_id: ready['account_id'],
      });
    } finally {
      expect((await next.stop('SIGTERM')).code).toBe(0);
    }
  });

  it('one port for both the API and functions is refused before anything listens', async () => {
    const result = await failingStart(tempDir('ledge-user-'), [
      '--port',
      String(apiPort),
      '--functions-port',
      String(apiPort),
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error: the API and functions ports must differ (both are ${apiPort})`);
  });

  it('a restart says where the credentials are (they are printed on the first start only)', async () => {
    // firstDir was bootstrapped by the first server; a restart on it needs that server gone.
    await first.stop('SIGTERM');
    const again = startAs(LEDGE_BIN, ['server', ...EPHEMERAL_PORT_FLAGS], {
      cwd: firstDir,
      env: env(),
    });
    try {
      await again.waitFor(/Press Ctrl\+C to stop/);
      const credentialsFile = join(firstDir, '.ledge/credentials.json');
      expect(again.stdout()).toContain(`Credentials: ${credentialsFile}`);
      expect(again.stdout()).not.toContain('API token');
      expect(again.stdout()).toMatch(/Account: +[0-9a-f]{32} \(admin@ledge\.localhost\)/);
    } finally {
      expect((await again.stop('SIGTERM')).code).toBe(0);
    }
  });
});
