import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ENTRY, cleanEnv, cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { accountSubdomain, api, callFunction, functionsPort, uploadScript } from './helpers.ts';
import { poll } from '../helpers/wait.ts';

const WORKER = `export default {
  fetch() { console.log('served'); return new Response('alive'); },
  scheduled() {},
};
`;

let ledge: TestLedge;
const base = () => `/accounts/${ledge.accountId}/workers`;

/** A deployed, routed script with a secret, a Cron Trigger and a kept log line. */
async function fullScript(name: string): Promise<void> {
  expect((await uploadScript(ledge, name, { modules: { 'index.js': WORKER } })).status).toBe(200);
  expect((await api(ledge, 'POST', `${base()}/scripts/${name}/subdomain`, { enabled: true })).status).toBe(200);
  expect(
    (
      await api(ledge, 'PUT', `${base()}/scripts/${name}/secrets`, {
        name: 'TOKEN',
        text: 's3cr3t',
        type: 'secret_text',
      })
    ).status,
  ).toBe(200);
  expect((await api(ledge, 'PUT', `${base()}/scripts/${name}/schedules`, [{ cron: '*/5 * * * *' }])).status).toBe(200);
  const host = `${name}.${await accountSubdomain(ledge)}.localhost`;
  expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe('alive');
  const logFile = join(ledge.dataDir, 'logs/workers', ledge.accountId, `${name}.log`);
  await poll(() => existsSync(logFile), { timeoutMs: 30_000 });
  expect(existsSync(logFile)).toBe(true);
}

/** What the database, the data dir, the scheduler and the functions port still hold of a script. */
async function leftovers(name: string) {
  const db = ledge.server.platform.db;
  const count = async (table: string) =>
    Number(
      (await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE account_id = ? AND script_name = ?`, [
        ledge.accountId,
        name,
      ]))!.n,
    );
  const host = `${name}.${await accountSubdomain(ledge)}.localhost`;
  return {
    versions: await count('worker_versions'),
    deployments: await count('worker_deployments'),
    secrets: await count('worker_secrets'),
    schedules: await count('worker_schedules'),
    logFile: existsSync(join(ledge.dataDir, 'logs/workers', ledge.accountId, `${name}.log`)),
    planned: ledge.server.platform.functions.crons.nextRuns(ledge.accountId, name).length,
    status: (await callFunction(functionsPort(ledge), host, '/')).status,
  };
}
const NOTHING = { versions: 0, deployments: 0, secrets: 0, schedules: 0, logFile: false, planned: 0, status: 404 };

/**
 * Runs `ledge` on a pseudo-terminal (python3's pty, as in the reuseport one-liner the runtime needs anyway),
 * typing `answer` once the yes/no prompt shows.
 */
const PTY_DRIVER = `
import os, pty, sys, re
answer = sys.argv[1].encode()
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
out = b''
typed = False
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    if not typed and re.search(rb'\\[[yY]/[nN]\\] ', out):
        typed = True
        os.write(fd, answer + b'\\r')
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
`;

function onTerminal(args: string[], answer: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('python3', ['-c', PTY_DRIVER, answer, process.execPath, CLI_ENTRY, ...args], {
      env: { ...cleanEnv(), ...cliEnv(ledge), LEDGE_CONFIG_DIR: tempDir('ledge-cfg-') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill(), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, output });
    });
  });
}

beforeAll(async () => {
  ledge = await startLedge();
});
afterAll(async () => ledge?.close());

describe('deleting a function', () => {
  it('wrangler delete removes the script with its secrets, crons, logs and workers.dev route', async () => {
    await fullScript('doomed');
    expect(ledge.server.platform.functions.crons.nextRuns(ledge.accountId, 'doomed')).toHaveLength(1);
    const deleted = await runWrangler(['delete', '--name', 'doomed'], {
      apiUrl: ledge.apiUrl,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
      timeoutMs: 60_000,
    });
    expect(deleted.code, deleted.stderr + deleted.stdout).toBe(0);
    expect(deleted.stdout).toContain('Successfully deleted doomed');
    expect(deleted.stderr).not.toMatch(/WARNING|ERROR/);
    expect((await api(ledge, 'GET', `${base()}/services/doomed`)).status).toBe(404);
    expect(await leftovers('doomed')).toEqual(NOTHING);
    // Gone is gone: a second delete is a 404, and the name can be used again from scratch.
    const again = await api(ledge, 'DELETE', `${base()}/services/doomed`);
    expect(again.status).toBe(404);
    expect(again.body.errors[0].code).toBe(10007);
    expect((await uploadScript(ledge, 'doomed', { modules: { 'index.js': WORKER } })).status).toBe(200);
    expect((await api(ledge, 'GET', `${base()}/scripts/doomed/secrets`)).body.result).toEqual([]);
  });

  it('a script used as a tail Worker is kept unless forced; force removes it from the producer', async () => {
    await fullScript('consumer');
    expect((await uploadScript(ledge, 'producer', { modules: { 'index.js': WORKER } })).status).toBe(200);
    const patched = await api(ledge, 'PATCH', `${base()}/scripts/producer/script-settings`, {
      tail_consumers: [{ service: 'consumer' }],
    });
    expect(patched.status).toBe(200);
    expect((await api(ledge, 'GET', `${base()}/tails/by-consumer/consumer`)).body.result).toEqual([
      { producer: { script: 'producer' } },
    ]);
    const refused = await api(ledge, 'DELETE', `${base()}/services/consumer?force=false`);
    expect(refused.status).toBe(409);
    expect(refused.body.errors[0].code).toBe(10064);
    expect(refused.body.errors[0].message).toContain('tail Worker of producer');
    // Not on a terminal, `ledge delete` never forces: the refusal is the error.
    const piped = await runCli(['delete', 'consumer'], { env: cliEnv(ledge) });
    expect(piped.code).toBe(1);
    expect(piped.stderr).toContain('force=true');
    expect((await leftovers('consumer')).versions).toBe(1);
    const forced = await runWrangler(['delete', 'consumer', '--force'], {
      apiUrl: ledge.apiUrl,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
      timeoutMs: 60_000,
    });
    expect(forced.code, forced.stderr + forced.stdout).toBe(0);
    expect(await leftovers('consumer')).toEqual(NOTHING);
    const settings = await api(ledge, 'GET', `${base()}/scripts/producer/script-settings`);
    expect(settings.body.result.tail_consumers).toEqual([]);
  });

  it('ledge delete asks on a terminal, and deletes only on yes', async () => {
    await fullScript('asked');
    const no = await onTerminal(['delete', 'asked'], 'n');
    expect(no.output).toContain('Are you sure you want to delete asked? This action cannot be undone.');
    expect(no.code, JSON.stringify(no.output)).toBe(1);
    expect((await leftovers('asked')).versions).toBe(1);
    const yes = await onTerminal(['delete', 'asked'], 'y');
    expect(yes.code, yes.output).toBe(0);
    expect(yes.output).toContain('Successfully deleted asked');
    expect(await leftovers('asked')).toEqual(NOTHING);
  });

  it('ledge delete with no argument deletes the project in the current directory', async () => {
    await fullScript('from-project');
    const dir = tempDir('ledge-delete-project-');
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'wrangler.toml'), 'name = "from-project"\nmain = "src/index.js"\n');
    const result = await runCli(['delete'], { env: cliEnv(ledge), cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Successfully deleted from-project');
    expect(await leftovers('from-project')).toEqual(NOTHING);
    const missing = await runCli(['delete', 'never-was', '--force'], { env: cliEnv(ledge) });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('does not exist');
  });
});
