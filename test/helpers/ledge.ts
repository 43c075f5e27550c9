import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { resolveServerConfig, startServer, type RunningServer, type ServerFlags } from '../../src/server/index.ts';
import { createLogger, type Logger } from '../../src/shared/logger.ts';
import { systemClock, type Clock } from '../../src/shared/clock.ts';
import { EPHEMERAL_PORT_FLAGS } from './server-ports.ts';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
export const CLI_ENTRY = join(REPO_ROOT, 'src/cli/main.ts');

/** Deterministic first-boot credentials, as LEDGE_BOOTSTRAP_* would set them. */
export const TEST_CREDENTIALS = {
  email: 'dev@example.com',
  apiKey: '0123456789abcdef0123456789abcdef01234',
  apiToken: 'test-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  accountId: '0123456789abcdef0123456789abcdef',
} as const;

export interface TestLedge {
  apiUrl: string;
  port: number;
  dataDir: string;
  accountId: string;
  email: string;
  apiKey: string;
  apiToken: string;
  server: RunningServer;
  /** Headers for the global key, and for the bearer token. */
  keyHeaders: Record<string, string>;
  tokenHeaders: Record<string, string>;
  close(): Promise<void>;
}

const temporaryDirs: string[] = [];
// Registered while the importing test file is collected, before its own hooks: after hooks run in reverse
// order, so this one runs last, once the file's servers are stopped. Without it every run left its config,
// data and project dirs behind (thousands in /tmp after a day of runs). Benchmarks import this module
// outside vitest; they clean up themselves.
if (process.env['VITEST']) {
  const { afterAll } = await import('vitest');
  afterAll(async () => {
    for (const dir of temporaryDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    for (const database of [...postgresDatabases.values()]) await database.drop();
    postgresDatabases.clear();
  });
}

/**
 * In the `postgres` test project (LEDGE_TEST_DATABASE=postgres) every server keeps its records in a
 * database of its own on the run's PostgreSQL cluster, one per data dir, so a restart on the same data dir
 * finds its records as it does on SQLite.
 */
const postgresDatabases = new Map<string, { url: string; drop(): Promise<void> }>();

async function databaseUrlFor(dataDir: string): Promise<string | undefined> {
  if (process.env['LEDGE_TEST_DATABASE'] !== 'postgres') return undefined;
  let database = postgresDatabases.get(dataDir);
  if (!database) {
    const { freshPostgresDatabase } = await import('./backends.ts');
    database = await freshPostgresDatabase();
    postgresDatabases.set(dataDir, database);
  }
  return database.url;
}

/** A fresh directory under the OS temp dir, removed after the test file that made it. */
export function tempDir(prefix = 'ledge-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temporaryDirs.push(dir);
  return dir;
}

/** Starts a real `ledge server` in this process on 127.0.0.1 with free ports and a fresh data dir. */
export async function startLedge(
  options: {
    dataDir?: string;
    flags?: ServerFlags;
    env?: NodeJS.ProcessEnv;
    logger?: Logger;
    /** The background jobs' time: a ManualClock (./manual-clock.ts) lets a test advance it. */
    clock?: Clock;
  } = {},
): Promise<TestLedge> {
  const dataDir = options.dataDir ?? tempDir();
  const databaseUrl = await databaseUrlFor(dataDir);
  const config = resolveServerConfig(
    {
      dataDir,
      databaseUrl,
      host: '127.0.0.1',
      port: 0,
      functionsPort: 0,
      trafficPort: 0,
      trafficTlsPort: 0,
      s3ApiPort: 0,
      ...options.flags,
    },
    {
      // Tunables a test file sets in process.env (e.g. LEDGE_LB_MIN_INTERVAL) reach the server too.
      ...process.env,
      LEDGE_BOOTSTRAP_EMAIL: TEST_CREDENTIALS.email,
      LEDGE_BOOTSTRAP_API_KEY: TEST_CREDENTIALS.apiKey,
      LEDGE_BOOTSTRAP_API_TOKEN: TEST_CREDENTIALS.apiToken,
      LEDGE_BOOTSTRAP_ACCOUNT_ID: TEST_CREDENTIALS.accountId,
      ...options.env,
    },
  );
  const server = await startServer(config, options.logger ?? createLogger('warn', options.clock ?? systemClock), {
    clock: options.clock ?? systemClock,
  });
  return {
    apiUrl: server.apiUrl,
    port: server.port,
    dataDir,
    accountId: TEST_CREDENTIALS.accountId,
    email: TEST_CREDENTIALS.email,
    apiKey: TEST_CREDENTIALS.apiKey,
    apiToken: TEST_CREDENTIALS.apiToken,
    server,
    keyHeaders: { 'x-auth-email': TEST_CREDENTIALS.email, 'x-auth-key': TEST_CREDENTIALS.apiKey },
    tokenHeaders: { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` },
    close: async () => {
      await server.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `ledge` CLI (the same Node that runs the tests) and collects its output. */
export function runCli(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      env: { ...cleanEnv(), LEDGE_CONFIG_DIR: tempDir('ledge-cfg-'), ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** The CLI env of a test: connection to `ledge` via the LEDGE_* variables, nothing inherited. */
export function cliEnv(ledge: TestLedge, auth: 'token' | 'key' = 'token'): NodeJS.ProcessEnv {
  const base = { LEDGE_API_URL: ledge.apiUrl, LEDGE_ACCOUNT_ID: ledge.accountId };
  return auth === 'token'
    ? { ...base, LEDGE_API_TOKEN: ledge.apiToken }
    : { ...base, LEDGE_EMAIL: ledge.email, LEDGE_API_KEY: ledge.apiKey };
}

/**
 * The environment without any credentials a developer's shell may carry, with V8's compile cache in the
 * checkout's node_modules/.cache as bin/ledge sets it: every Node the tests spawn (the CLI, servers, wrangler)
 * then reuses compiled (and type-stripped) modules instead of compiling them again, ~0.1 s of CPU per CLI run.
 */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (/^(LEDGE_|CLOUDFLARE_|CF_)/.test(name) && name !== 'LEDGE_LOG_LEVEL') delete env[name];
  }
  env['NODE_COMPILE_CACHE'] ??= join(REPO_ROOT, 'node_modules/.cache/node-compile-cache');
  return env;
}

export interface SpawnedLedge {
  child: ChildProcess;
  apiUrl: string;
  info: Record<string, string>;
  /** Sends a signal and waits for the process to exit; returns its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `ledge server`'s flags for a test: JSON output, the data dir, and every port chosen by the system. */
export function serverFlags(dataDir: string): string[] {
  return ['--json', '--data-dir', dataDir, ...EPHEMERAL_PORT_FLAGS];
}

/** Starts `ledge server --json` as a child process (for restart, SIGTERM and kill -9 tests). */
export async function spawnLedge(
  dataDir: string,
  extraArgs: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<SpawnedLedge> {
  // In the postgres project a spawned server gets its data dir's database too (a restart finds its records).
  const databaseUrl = await databaseUrlFor(dataDir);
  const child = spawn(process.execPath, [CLI_ENTRY, 'server', ...serverFlags(dataDir), ...extraArgs], {
    cwd: REPO_ROOT,
    env: {
      ...cleanEnv(),
      LEDGE_LOG_LEVEL: 'warn',
      LEDGE_BOOTSTRAP_EMAIL: TEST_CREDENTIALS.email,
      LEDGE_BOOTSTRAP_API_KEY: TEST_CREDENTIALS.apiKey,
      LEDGE_BOOTSTRAP_API_TOKEN: TEST_CREDENTIALS.apiToken,
      LEDGE_BOOTSTRAP_ACCOUNT_ID: TEST_CREDENTIALS.accountId,
      // The server registers itself for `ledge` (server-registry.ts): in a throwaway dir, not the user's.
      LEDGE_CONFIG_DIR: tempDir('ledge-cfg-'),
      ...(databaseUrl ? { LEDGE_DATABASE_URL: databaseUrl } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const line = await new Promise<string>((resolveLine, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', resolveLine);
    child.once('exit', (code) => reject(new Error(`ledge server exited (${code}) before ready: ${stderr}`)));
  });
  const info = JSON.parse(line) as Record<string, string>;
  // With --json a start-up failure is JSON too: {"success":false,"errors":[{"code","message"}]}.
  if ((info as { success?: boolean }).success === false) {
    await exited;
    throw new Error(`ledge server failed to start: ${line}`);
  }
  return {
    child,
    apiUrl: info['api_url']!,
    info,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
