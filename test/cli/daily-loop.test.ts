import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cliEnv,
  runCli,
  spawnLedge,
  startLedge,
  tempDir,
  type SpawnedLedge,
  type TestLedge,
} from '../helpers/ledge.ts';
import { createPools } from '../email-migration/fixtures.ts';

/** The smaller points of issue 28 (point 7), each as a new user met it. */
let ledge: TestLedge;
beforeAll(async () => {
  ledge = await startLedge();
});
afterAll(async () => ledge?.close());
const cli = (...args: string[]) => runCli(args, { env: cliEnv(ledge) });

describe('the daily loop, round 2: smaller points', () => {
  it('`ledge` with no arguments (or a noun without its command) exits 2 like any usage error', async () => {
    const bare = await runCli([]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('Usage: ledge');
    expect((await runCli(['pools'])).code).toBe(2);
    expect((await runCli(['--help'])).code).toBe(0);
    expect((await runCli(['pools', '--help'])).code).toBe(0);
  });

  it('`ledge tail --format json|pretty` is accepted as wrangler spells it; another format is a usage error', async () => {
    const bad = await cli('tail', 'nope', '--format', 'yaml');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--format must be json or pretty');
    // Accepted: the command goes on to the API, which has no such script.
    for (const format of ['json', 'pretty']) {
      const result = await cli('tail', 'nope', '--format', format);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stdout + result.stderr).toContain('This Worker does not exist');
    }
    // --format json is --json: the error too comes as JSON.
    const json = await cli('tail', 'nope', '--format', 'json');
    expect(JSON.stringify(JSON.parse(json.stdout || json.stderr))).toContain('10007');
  });

  it('`ledge pools create NAME` without --origin names the missing flag', async () => {
    const result = await cli('pools', 'create', 'web');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--origin');
    expect(result.stderr).not.toContain('expected array');
  });

  it('the migration dry run says "1 pool" and shows all three steps', async () => {
    await createPools(ledge, 1, () => 'ops@example.com', 'solo');
    const result = await cli('notifications', 'migrate', '--dry-run');
    expect(result.code, result.stderr).toBe(0);
    const out = result.stdout;
    expect(out).toContain('Step 1/3: listing pools');
    expect(out).toContain('  1 pool, 1 with a legacy notification_email on page 1');
    expect(out).toContain('Step 2/3');
    expect(out).toContain('would create policy');
    expect(out).toContain('Step 3/3');
    expect(out).toContain('would patch page 1');
    expect(out).not.toMatch(/\(s\)|1 pools/);
    // Nothing to migrate: no "on 0 page(s)".
    expect((await cli('notifications', 'migrate')).code).toBe(0);
    const none = await cli('notifications', 'migrate', '--dry-run');
    expect(none.stdout).toContain('  1 pool, 0 with a legacy notification_email\n');
    expect(none.stdout).toContain('no page to patch');
  });
});

describe('whoami with a wrong --api-url', () => {
  let server: SpawnedLedge;
  let configDir: string;
  beforeAll(async () => {
    configDir = tempDir('ledge-cfg-');
    server = await spawnLedge(join(tempDir('ledge-srv-'), 'data'), ['--functions-processes', '1'], {
      LEDGE_CONFIG_DIR: configDir,
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('says that a server is registered elsewhere, and where', async () => {
    const result = await runCli(['whoami', '--api-url', 'http://127.0.0.1:9/client/v4'], {
      env: { LEDGE_CONFIG_DIR: configDir },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no credentials for http://127.0.0.1:9/client/v4');
    expect(result.stderr).toContain(`registered elsewhere:\n  ${server.apiUrl}`);
    expect(result.stderr).not.toContain('no running `ledge server` is registered');
    // The right URL works.
    const right = await runCli(['whoami', '--api-url', server.apiUrl], { env: { LEDGE_CONFIG_DIR: configDir } });
    expect(right.code, right.stderr).toBe(0);
  });
});
