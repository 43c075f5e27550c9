import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command, Option } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.ts';
import { CLI_ENTRY, cleanEnv, cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';

/** Issue 11, point 7: JSON errors, API URLs without /client/v4, progress on a terminal, help, exit codes. */
let ledge: TestLedge;
beforeAll(async () => {
  ledge = await startLedge();
  expect((await runCli(['bucket', 'create', 'polish'], { env: cliEnv(ledge) })).code).toBe(0);
});
afterAll(() => ledge.close());

const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

/**
 * Runs the CLI on a pseudo-terminal (util-linux `script`), as a person at a terminal would; stdout and
 * stderr arrive mixed, as on a screen. `answers` are typed in turn, each once `prompt` appears.
 */
function runInTerminal(
  args: string[],
  env: NodeJS.ProcessEnv,
  answers: { prompt: string; type: string }[] = [],
): Promise<{ code: number; screen: string }> {
  const command = [process.execPath, CLI_ENTRY, ...args].map(quote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { ...cleanEnv(), LEDGE_CONFIG_DIR: tempDir('ledge-cfg-'), ...env, TERM: 'xterm' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    const pending = [...answers];
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      screen += d.toString();
      const next = pending[0];
      if (next && screen.includes(next.prompt)) {
        pending.shift();
        child.stdin.write(next.type);
      }
    });
    child.stderr.on('data', (d: Buffer) => (screen += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, screen });
    });
  });
}

describe('--json errors', () => {
  const parse = (stdout: string) => JSON.parse(stdout) as { success: boolean; errors: { code: number }[] };

  it('an API error is the v4 error shape on stdout, exit 1', async () => {
    const result = await runCli(['whoami', '--json'], { env: { ...cliEnv(ledge), LEDGE_API_TOKEN: 'wrong' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    expect(parse(result.stdout)).toEqual({ success: false, errors: [{ code: 1000, message: expect.any(String) }] });
  });

  it('a user error (no credentials) and a usage error too, with exit codes 1 and 2', async () => {
    const none = await runCli(['bucket', 'list', '--json'], { cwd: tempDir() });
    expect(none.code).toBe(1);
    expect(parse(none.stdout).errors[0]).toMatchObject({ code: 1, message: expect.stringMatching(/^no credentials/) });
    const usage = await runCli(['bucket', 'list', '--json', '--no-such-flag']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe('');
    expect(parse(usage.stdout)).toEqual({
      success: false,
      errors: [{ code: 2, message: "unknown option '--no-such-flag'" }],
    });
    const missing = await runCli(['bucket', 'create', '--json']);
    expect([missing.code, parse(missing.stdout).errors[0]?.code]).toEqual([2, 2]);
  });

  it('without --json, errors stay one line on stderr', async () => {
    const result = await runCli(['whoami'], { env: { ...cliEnv(ledge), LEDGE_API_TOKEN: 'wrong' } });
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error: .* \[code 1000\]\n$/);
  });
});

describe('--api-url', () => {
  const base = () => ledge.apiUrl.replace(/\/client\/v4$/, '');

  it('works without /client/v4 (and with a trailing slash)', async () => {
    for (const url of [base(), `${base()}/`, `${ledge.apiUrl}/`]) {
      const result = await runCli(['--api-url', url, '--api-token', ledge.apiToken, 'whoami', '--json']);
      expect(result.code, `${url}: ${result.stderr}`).toBe(0);
      expect(JSON.parse(result.stdout).api_url).toBe(ledge.apiUrl);
    }
  });

  it('hints at /client/v4 when another path finds no route, and refuses what is not a URL', async () => {
    const wrongPath = await runCli(['--api-url', `${base()}/v4`, '--api-token', ledge.apiToken, 'whoami']);
    expect(wrongPath.code).toBe(1);
    expect(wrongPath.stderr).toContain('It usually ends with /client/v4');
    expect(wrongPath.stderr).toContain('[code 7003]');
    const notUrl = await runCli(['--api-url', '127.0.0.1:8787', '--api-token', 'x', 'whoami']);
    expect(notUrl.code).toBe(1);
    expect(notUrl.stderr).toContain('invalid API URL "127.0.0.1:8787"');
  });
});

describe('object put/get', () => {
  const big = () => {
    const file = join(tempDir('ledge-big-'), 'big.bin');
    writeFileSync(file, Buffer.alloc(9 * 1024 * 1024, 7));
    return file;
  };

  it('show progress on a terminal for files over 8 MiB, then one success line', async () => {
    const file = big();
    const put = await runInTerminal(['object', 'put', 'polish/big.bin', '--file', file], cliEnv(ledge));
    expect(put.code, put.screen).toBe(0);
    expect(put.screen).toMatch(
      /Uploading polish\/big\.bin {2}(?:\[[#.]+\] {2})?[\d.]+ \/ 9\.0 MiB {2}\d+% {2}[\d.]+ MiB\/s/,
    );
    expect(put.screen).toContain('\r\x1b[2K'); // the progress line is erased before the success line
    expect(put.screen).toMatch(/Uploaded polish\/big\.bin \(9437184 bytes, etag [0-9a-f]{32}-2\)\.\r?\n$/);
    const out = join(tempDir('ledge-big-'), 'out.bin');
    const get = await runInTerminal(['object', 'get', 'polish/big.bin', '--file', out], cliEnv(ledge));
    expect(get.code, get.screen).toBe(0);
    expect(get.screen).toMatch(/Downloading polish\/big\.bin {2}(?:\[[#.]+\] {2})?[\d.]+ \/ 9\.0 MiB {2}\d+%/);
    expect(get.screen).toMatch(/Downloaded polish\/big\.bin to .*out\.bin \(9437184 bytes\)\.\r?\n$/);
  });

  it('show no progress when not on a terminal, or for small files', async () => {
    const file = big();
    const put = await runCli(['object', 'put', 'polish/big2.bin', '--file', file], { env: cliEnv(ledge) });
    expect(put.code).toBe(0);
    expect(put.stderr).toBe('');
    expect(put.stdout.split('\n')).toEqual([expect.stringMatching(/^Uploaded polish\/big2\.bin/), '']);
    const small = join(tempDir('ledge-small-'), 'small.txt');
    writeFileSync(small, 'tiny');
    const onTerminal = await runInTerminal(['object', 'put', 'polish/small.txt', '--file', small], cliEnv(ledge));
    expect(onTerminal.code).toBe(0);
    expect(onTerminal.screen).not.toContain('Uploading');
    expect(onTerminal.screen).toMatch(/^Uploaded polish\/small\.txt \(4 bytes/);
  });
});

describe('help and exit codes', () => {
  it('every --help lists the command’s own options and the global ones', async () => {
    const walk = (command: Command): Command[] => command.commands.flatMap((sub) => [sub, ...walk(sub)]);
    const program = await buildProgram();
    const globals = program.options.map((o: Option) => o.long!);
    for (const command of walk(program)) {
      const help = command.helpInformation();
      const path: string[] = [];
      for (let c: Command | null = command; c && c.parent; c = c.parent) path.unshift(c.name());
      for (const option of command.options as Option[]) expect(help, path.join(' ')).toContain(option.flags);
      for (const long of globals) expect(help, path.join(' ')).toContain(long);
    }
  });

  it('usage errors exit 2; API and user errors exit 1', async () => {
    const cases: [string[], number][] = [
      [['bucket', 'list', '--nope'], 2], // unknown option
      [['bucket', 'create'], 2], // missing argument
      [['object', 'put', 'polish/k'], 2], // missing required option --file
      [['object', 'get', 'no-key'], 2], // <bucket>/<key> without a key
      [['secret', 'put', '1-not-an-identifier', '--name', 'w'], 2],
      [['bucket', 'delete', 'no-such-bucket'], 1], // API error (10006)
      [['object', 'put', 'polish/k', '--file', '/no/such/file'], 1], // user error
    ];
    for (const [args, code] of cases) {
      const result = await runCli(args, { env: cliEnv(ledge) });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(code);
      expect(result.stderr, args.join(' ')).toMatch(/^error: /);
    }
  });
});

describe('secret put for a Worker that does not exist yet, on a terminal', () => {
  const exists = async (script: string) =>
    (
      await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/workers/scripts/${script}/settings`, {
        headers: ledge.tokenHeaders,
      })
    ).status;

  it('asks before creating it: no adds nothing, yes creates it with the secret', async () => {
    const value = { prompt: 'Enter the secret text', type: 'hunter2\r' };
    const declined = await runInTerminal(['secret', 'put', 'AUTH_KEY_SECRET', '--name', 'asked'], cliEnv(ledge), [
      value,
      { prompt: 'Create it', type: 'n\r' },
    ]);
    expect(declined.code, declined.screen).toBe(1);
    expect(declined.screen).toContain('There is no Worker called "asked" yet.');
    expect(declined.screen).toContain('[Y/n]');
    expect(declined.screen).toContain('error: no secret added');
    expect(declined.screen).not.toContain('hunter2'); // typed without echo
    expect(await exists('asked')).toBe(404);

    const accepted = await runInTerminal(['secret', 'put', 'AUTH_KEY_SECRET', '--name', 'asked'], cliEnv(ledge), [
      value,
      { prompt: 'Create it', type: '\r' }, // the default is yes
    ]);
    expect(accepted.code, accepted.screen).toBe(0);
    expect(accepted.screen).toContain('Success! Uploaded secret AUTH_KEY_SECRET for asked.');
    expect(await exists('asked')).toBe(200);
    const listed = await runCli(['secret', 'list', '--name', 'asked'], { env: cliEnv(ledge) });
    expect(listed.stdout).toContain('AUTH_KEY_SECRET');
  });
});
