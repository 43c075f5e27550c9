import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.ts';
import { cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';

let ledge: TestLedge;
beforeAll(async () => {
  ledge = await startLedge();
});
afterAll(() => ledge.close());

describe('ledge whoami', () => {
  it('shows the email and the accounts (token from the environment)', async () => {
    const { code, stdout } = await runCli(['whoami'], { env: cliEnv(ledge) });
    expect(code).toBe(0);
    expect(stdout).toContain(ledge.email);
    expect(stdout).toContain(ledge.accountId);
  });

  it('prints JSON with --json (global key from the environment)', async () => {
    const { code, stdout } = await runCli(['whoami', '--json'], { env: cliEnv(ledge, 'key') });
    expect(code).toBe(0);
    const parsed = JSON.parse(stdout);
    expect(parsed.email).toBe(ledge.email);
    expect(parsed.accounts).toEqual([{ id: ledge.accountId, name: expect.any(String) }]);
  });

  it('accepts the CLOUDFLARE_* variable names', async () => {
    const { code, stdout } = await runCli(['whoami', '--json'], {
      env: { CLOUDFLARE_API_BASE_URL: ledge.apiUrl, CLOUDFLARE_EMAIL: ledge.email, CLOUDFLARE_API_KEY: ledge.apiKey },
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout).email).toBe(ledge.email);
  });

  it('works with zero configuration next to a local data dir (credentials.json)', async () => {
    // credentials.json of the test server is in its data dir; the CLI finds it through LEDGE_DATA_DIR or ./.ledge.
    const { code, stdout } = await runCli(['whoami', '--json'], { env: { LEDGE_DATA_DIR: ledge.dataDir } });
    expect(code).toBe(0);
    expect(JSON.parse(stdout).email).toBe(ledge.email);
    const cwd = tempDir();
    mkdirSync(join(cwd, '.ledge'));
    writeFileSync(join(cwd, '.ledge/credentials.json'), readFileSync(join(ledge.dataDir, 'credentials.json')));
    const fromCwd = await runCli(['whoami', '--json'], { cwd });
    expect(fromCwd.code).toBe(0);
  });

  it('flags win over the environment', async () => {
    const env = { ...cliEnv(ledge), LEDGE_API_TOKEN: 'wrong-token-from-env' };
    const withFlag = await runCli(['--api-token', ledge.apiToken, 'whoami', '--json'], { env });
    expect(withFlag.code).toBe(0);
    const withoutFlag = await runCli(['whoami'], { env });
    expect(withoutFlag.code).toBe(1);
    expect(withoutFlag.stderr).toMatch(/^error: .*\[code 1000\]\n$/);
  });
});

describe('ledge login / logout', () => {
  it('saves checked credentials (0600) that later commands use, below flags and environment', async () => {
    const configDir = tempDir('ledge-cfg-');
    const env = { LEDGE_CONFIG_DIR: configDir };
    const login = await runCli(['--api-url', ledge.apiUrl, '--api-token', ledge.apiToken, 'login'], { env });
    expect(login.code).toBe(0);
    expect(statSync(join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
    const whoami = await runCli(['whoami', '--json'], { env });
    expect(whoami.code).toBe(0);
    expect(JSON.parse(whoami.stdout).email).toBe(ledge.email);
    // The environment wins over the saved login.
    const overridden = await runCli(['whoami'], {
      env: { ...env, LEDGE_API_URL: ledge.apiUrl, LEDGE_API_TOKEN: 'nope-token' },
    });
    expect(overridden.code).toBe(1);
    expect((await runCli(['logout'], { env })).code).toBe(0);
    const after = await runCli(['whoami'], { env, cwd: tempDir() });
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/no credentials/);
  });

  it('refuses to save credentials the API rejects', async () => {
    const configDir = tempDir('ledge-cfg-');
    const login = await runCli(['--api-url', ledge.apiUrl, '--api-token', 'bad-token', 'login'], {
      env: { LEDGE_CONFIG_DIR: configDir },
    });
    expect(login.code).toBe(1);
    expect(login.stderr).toContain('[code 1000]');
  });
});

describe('exit codes and errors', () => {
  it('exits 2 on usage errors', async () => {
    expect((await runCli(['no-such-command'])).code).toBe(2);
    expect((await runCli(['whoami', '--no-such-flag'])).code).toBe(2);
    expect((await runCli(['admin', 'user', 'create'])).code).toBe(2); // missing <email>
    expect((await runCli(['login'], { env: { LEDGE_CONFIG_DIR: tempDir() } })).code).toBe(2);
  });

  it('refuses invalid server settings with one clear line and starts nothing', async () => {
    const dataDir = tempDir();
    const processes = await runCli(['server', '--data-dir', dataDir, '--port', '0', '--functions-processes', '0']);
    expect(processes).toMatchObject({
      code: 1,
      stderr: 'error: invalid number of functions processes: 0 (use 1 to 64), from --functions-processes\n',
    });
    const fromEnv = await runCli(['server', '--data-dir', dataDir, '--port', '0'], {
      env: { LEDGE_FUNCTIONS_PROCESSES: 'many' },
    });
    expect(fromEnv).toMatchObject({
      code: 1,
      stderr: 'error: invalid number of functions processes: many (use 1 to 64), from LEDGE_FUNCTIONS_PROCESSES\n',
    });
  });

  it('exits 1 with one line naming the v4 code on API errors', async () => {
    const { code, stderr } = await runCli(['whoami'], {
      env: { LEDGE_API_URL: ledge.apiUrl, LEDGE_EMAIL: ledge.email, LEDGE_API_KEY: 'ffff' },
    });
    expect(code).toBe(1);
    expect(stderr).toBe('error: Unknown X-Auth-Key or X-Auth-Email [code 9103]\n');
  });

  it('says clearly when the server is not running', async () => {
    const { code, stderr } = await runCli(['whoami'], {
      env: { LEDGE_API_URL: 'http://127.0.0.1:9/client/v4', LEDGE_API_TOKEN: 'x' },
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/cannot reach the API/);
  });

  it('has help on every command', async () => {
    const walk = (command: Command, path: string[]): string[][] =>
      command.commands.flatMap((sub) => [[...path, sub.name()], ...walk(sub, [...path, sub.name()])]);
    const paths = walk(await buildProgram(), []);
    expect(paths.length).toBeGreaterThan(5);
    // In-process for speed: a fresh program per command, its output captured.
    for (const path of paths) {
      let out = '';
      const program = await buildProgram();
      const capture = (cmd: Command) => {
        cmd.configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (out += s) });
        cmd.commands.forEach(capture);
      };
      capture(program);
      const error = await program.parseAsync(['node', 'ledge', ...path, '--help']).catch((e: unknown) => e);
      expect((error as { code?: string }).code, path.join(' ')).toBe('commander.helpDisplayed');
      expect(out, path.join(' ')).toMatch(new RegExp(`^Usage: ledge ${path.join(' ')}`));
    }
    // And once through the real binary, for the exit code.
    const { code, stdout } = await runCli(['whoami', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: ledge whoami/);
  });
});

describe('ledge admin', () => {
  it('creates accounts, users and tokens on the data dir, and they work against the running server', async () => {
    const dataDir = ledge.dataDir;
    const account = await runCli(['admin', '--data-dir', dataDir, 'account', 'create', '--name', 'Tenant B', '--json']);
    expect(account.code).toBe(0);
    const accountId = JSON.parse(account.stdout).id as string;
    const user = await runCli([
      'admin',
      '--data-dir',
      dataDir,
      'user',
      'create',
      'b@example.com',
      '--account',
      accountId,
      '--json',
    ]);
    expect(user.code).toBe(0);
    const { api_key: apiKey } = JSON.parse(user.stdout);
    const token = await runCli([
      'admin',
      '--data-dir',
      dataDir,
      'token',
      'create',
      '--user',
      'b@example.com',
      '--account',
      accountId,
      '--read-only',
      '--json',
    ]);
    expect(token.code).toBe(0);
    const { value, read_only: readOnly } = JSON.parse(token.stdout);
    expect(readOnly).toBe(true);

    const viaKey = await runCli(['whoami', '--json'], {
      env: { LEDGE_API_URL: ledge.apiUrl, LEDGE_EMAIL: 'b@example.com', LEDGE_API_KEY: apiKey },
    });
    expect(JSON.parse(viaKey.stdout).accounts).toEqual([{ id: accountId, name: 'Tenant B' }]);
    const viaToken = await fetch(`${ledge.apiUrl}/accounts/${accountId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${value}` },
      body: '{"name":"x"}',
    });
    expect(viaToken.status).toBe(403);
    // Tenant B cannot see the first tenant.
    const foreign = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}`, {
      headers: { authorization: `Bearer ${value}` },
    });
    expect(foreign.status).toBe(403);
  });

  it('refuses duplicates and unknown references with exit code 1', async () => {
    const dup = await runCli(['admin', '--data-dir', ledge.dataDir, 'user', 'create', ledge.email]);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/already exists/);
    const noAccount = await runCli([
      'admin',
      '--data-dir',
      ledge.dataDir,
      'token',
      'create',
      '--user',
      ledge.email,
      '--account',
      'ffffffffffffffffffffffffffffffff',
    ]);
    expect(noAccount.code).toBe(1);
  });
});
