import { afterEach, describe, expect, it } from 'vitest';
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

const TEXT_LINE = /^\d\d:\d\d:\d\d\.\d{3} (DEBUG|INFO |WARN |ERROR) \S/;

/**
 * "The first hour", a quiet terminal: what `ledge server` prints by default is readable text, with none
 * of workerd's internal "NOSENTRY ... compile cache" warnings; `--log-format json` (or
 * LEDGE_LOG_FORMAT=json) gives one JSON object per line instead.
 */
describe('ledge server logs', () => {
  const servers: Running[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop('SIGTERM');
  });

  /** Starts a server as a user does, waits until it is ready, stops it, and returns its stderr. */
  const runServer = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const server = startAs(LEDGE_BIN, ['server', ...EPHEMERAL_PORT_FLAGS, ...args], {
      cwd: tempDir('ledge-user-'),
      env: userEnv(scratchHome(), env),
    });
    servers.push(server);
    await server.waitFor(/Press Ctrl\+C to stop/);
    const { code } = await server.stop('SIGTERM');
    expect(code).toBe(0);
    return server.stderr().split('\n').filter(Boolean);
  };

  it('is readable text by default, with no workerd noise', async () => {
    const lines = await runServer([]);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(TEXT_LINE);
    expect(lines.join('\n')).not.toContain('NOSENTRY');
    expect(lines.some((line) => / INFO {2}functions runtime started .*port=\d+/.test(line))).toBe(true);
    expect(
      lines.some((line) => / INFO {2}ledge server ready api_url=http:\/\/127\.0\.0\.1:\d+\/client\/v4/.test(line)),
    ).toBe(true);
    expect(lines.some((line) => line.includes('shutting down reason=SIGTERM'))).toBe(true);
  });

  it('the noise is still there for debugging (LEDGE_LOG_LEVEL=debug), so the filter is what keeps it out', async () => {
    const lines = await runServer([], { LEDGE_LOG_LEVEL: 'debug' });
    // The pinned workerd warns about its per-isolate compile cache on every start (see workerd-noise.ts).
    const noise = lines.filter((line) => line.includes('NOSENTRY'));
    expect(noise.length).toBeGreaterThan(0);
    for (const line of noise) expect(line).toMatch(/^\S+ DEBUG workerd /);
  });

  it('is one JSON object per line with --log-format json, and with LEDGE_LOG_FORMAT=json', async () => {
    for (const lines of [
      await runServer(['--log-format', 'json']),
      await runServer([], { LEDGE_LOG_FORMAT: 'json' }),
    ]) {
      const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(records.find((r) => r['msg'] === 'ledge server ready')).toMatchObject({ level: 'info' });
      for (const record of records) expect(record).toHaveProperty('time');
      expect(lines.join('\n')).not.toContain('NOSENTRY');
    }
  });

  it('refuses an unknown log format with a clear error and exit code 1', async () => {
    const result = await runAs(LEDGE_BIN, ['server', '--log-format', 'xml'], {
      cwd: tempDir('ledge-user-'),
      env: userEnv(scratchHome()),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error: invalid log format: xml (use text or json)');
  });
});
