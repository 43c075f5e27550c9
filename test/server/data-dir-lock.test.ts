import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI_ENTRY,
  serverFlags,
  cleanEnv,
  REPO_ROOT,
  runCli,
  spawnLedge,
  tempDir,
  TEST_CREDENTIALS,
  type CliResult,
  type SpawnedLedge,
  type TestLedge,
} from '../helpers/ledge.ts';
import { accountSubdomain, callFunction, enableWorkersDev, uploadScript } from '../workers/helpers.ts';
import { EPHEMERAL_PORT_FLAGS } from '../helpers/user-shell.ts';

/**
 * Issue 26 point 8, "one data dir, one server": a second `ledge server` on a data dir that a running server
 * holds used to start, rewrite the first one's workerd configs and delete its runtime sockets (the first
 * server's functions broke). Now it is refused at once, naming the holder; a killed holder leaves no lock
 * behind; of two servers starting together exactly one wins.
 */
const running: SpawnedLedge[] = [];
afterAll(async () => {
  await Promise.all(running.map((server) => server.stop('SIGKILL')));
});

async function start(dataDir: string, args: string[] = []): Promise<SpawnedLedge> {
  const server = await spawnLedge(dataDir, args);
  running.push(server);
  return server;
}

/** The API helpers of test/workers take a TestLedge; a spawned server has what they use. */
function asTestLedge(server: SpawnedLedge): TestLedge {
  return {
    apiUrl: server.apiUrl,
    accountId: TEST_CREDENTIALS.accountId,
    tokenHeaders: { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` },
  } as unknown as TestLedge;
}

/** Deploys a function on workers.dev and returns how to call it. */
async function deployHello(server: SpawnedLedge, text: string) {
  const ledge = asTestLedge(server);
  const upload = await uploadScript(ledge, 'hello', {
    modules: { 'index.js': `export default { fetch() { return new Response(${JSON.stringify(text)}); } };` },
  });
  expect(upload.status, JSON.stringify(upload.body)).toBe(200);
  expect((await enableWorkersDev(ledge, 'hello')).status).toBe(200);
  const host = `hello.${await accountSubdomain(ledge)}.localhost`;
  const port = Number(server.info['functions_port']);
  return () => callFunction(port, host, '/');
}

/** A `ledge server` run that is expected to end by itself (refused), with how long it took. */
async function refusedStart(dataDir: string, args: string[] = []): Promise<CliResult & { ms: number }> {
  const started = Date.now();
  const result = await runCli(['server', '--data-dir', dataDir, ...EPHEMERAL_PORT_FLAGS, ...args], {
    env: { LEDGE_LOG_LEVEL: 'warn' },
  });
  return { ...result, ms: Date.now() - started };
}

describe('one data dir, one server', () => {
  it('a second ledge server on a running server’s data dir no longer starts and deletes its runtime sockets: exit 1 at once, naming the PID and API URL', async () => {
    const dataDir = tempDir('ledge-lock-');
    const first = await start(dataDir);
    const call = await deployHello(first, 'first server');
    expect((await call()).text).toBe('first server');
    const socketsBefore = readdirSync(join(dataDir, 'runtime', 'sockets')).sort();

    const second = await refusedStart(dataDir);
    expect(second.code, second.stderr).toBe(1);
    expect(second.stderr).toContain(`data dir ${dataDir} is in use by ledge server PID ${first.child.pid}`);
    expect(second.stderr).toContain(`API ${first.apiUrl}`);
    expect(second.stderr).toContain('--data-dir');
    expect(second.stdout).not.toContain('Ledge is running');
    // At once: loading the CLI, never a timeout.
    expect(second.ms).toBeLessThan(15_000);

    // The first server is untouched: same runtime sockets, its function answers, a deploy still works.
    expect(readdirSync(join(dataDir, 'runtime', 'sockets')).sort()).toEqual(socketsBefore);
    expect(first.child.exitCode).toBeNull();
    for (let i = 0; i < 5; i++) expect((await call()).text).toBe('first server');
    const redeployed = await deployHello(first, 'first server, v2');
    expect((await redeployed()).text).toBe('first server, v2');

    // --json: the refusal is the CLI's JSON error, with the same message.
    const json = await refusedStart(dataDir, ['--json']);
    expect(json.code).toBe(1);
    const envelope = JSON.parse(json.stdout.trim().split('\n').pop()!) as {
      success: boolean;
      errors: Array<{ message: string }>;
    };
    expect(envelope.success).toBe(false);
    expect(envelope.errors[0]?.message).toContain(`PID ${first.child.pid}`);
  });

  it('a server killed with SIGKILL leaves no stale lock: the next server on its data dir starts and serves', async () => {
    const dataDir = tempDir('ledge-lock-');
    const first = await start(dataDir);
    await deployHello(first, 'before the kill');
    await first.stop('SIGKILL');

    const second = await start(dataDir);
    const ledge = asTestLedge(second);
    const host = `hello.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(Number(second.info['functions_port']), host, '/')).text).toBe('before the kill');
    // And this one holds the lock now.
    const third = await refusedStart(dataDir);
    expect(third.code).toBe(1);
    expect(third.stderr).toContain(`PID ${second.child.pid}`);
  });

  it('two servers starting at the same moment on one data dir: exactly one wins', async () => {
    const dataDir = tempDir('ledge-lock-');
    const env = {
      ...cleanEnv(),
      LEDGE_LOG_LEVEL: 'warn',
      LEDGE_CONFIG_DIR: tempDir('ledge-cfg-'),
      LEDGE_BOOTSTRAP_EMAIL: TEST_CREDENTIALS.email,
      LEDGE_BOOTSTRAP_API_TOKEN: TEST_CREDENTIALS.apiToken,
    };
    const args = [CLI_ENTRY, 'server', ...serverFlags(dataDir)];
    const starts = [0, 1].map(() => {
      const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const firstLine = new Promise<string>((resolve) => {
        child.stdout.on('data', () => stdout.includes('\n') && resolve(stdout.split('\n')[0]!));
        child.once('exit', () => resolve(stdout.split('\n')[0]!));
      });
      return { child, firstLine };
    });
    try {
      const lines = await Promise.all(starts.map((s) => s.firstLine));
      const results = lines.map((line) => JSON.parse(line) as { api_url?: string; success?: boolean });
      const winners = results.filter((r) => r.api_url !== undefined);
      const losers = results.filter((r) => r.success === false);
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(1);
      expect(JSON.stringify(losers[0])).toContain('is in use by ledge server PID');
      const user = await fetch(`${winners[0]!.api_url}/user`, {
        headers: { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` },
      });
      expect(user.status).toBe(200);
    } finally {
      for (const { child } of starts) if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('the port-in-use error says that a second server also needs its own --data-dir', async () => {
    const first = await start(tempDir('ledge-lock-'));
    const apiPort = new URL(first.apiUrl).port;
    const other = tempDir('ledge-lock-');
    const result = await refusedStart(other, ['--port', apiPort]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`API port ${apiPort} on 127.0.0.1 is in use by another process`);
    expect(result.stderr).toContain('a second ledge server also needs its own --data-dir');
    // The refused server released its lock on the other data dir: a server can start there.
    expect(existsSync(other)).toBe(true);
    const next = await start(other);
    expect((await fetch(`${next.apiUrl}/user`, { headers: asTestLedge(next).tokenHeaders })).status).toBe(200);
  });
});
