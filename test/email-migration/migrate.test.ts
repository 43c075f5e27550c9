import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  MigrationApi,
  migrate,
  migrationStatus,
  parseAddresses,
  type MigrateOptions,
} from '../../src/email-migration/index.ts';
import { cliEnv, runCli, startLedge, type TestLedge } from '../helpers/ledge.ts';
import { allPolicies, allPools, clientFor, createPools } from './fixtures.ts';

// One server for the file, and a fresh account of the bootstrap user per test: each test starts from an account
// with no pools and no policies, as it did with a server of its own, without paying for a server start each.
let server: TestLedge;
let ledge: TestLedge;
let userId: string;
let accounts = 0;
beforeAll(async () => {
  server = await startLedge();
  const me = await fetch(`${server.apiUrl}/user`, { headers: server.tokenHeaders });
  userId = ((await me.json()) as { result: { id: string } }).result.id;
});
afterAll(() => server.close());
beforeEach(async () => {
  const platform = server.server.platform;
  const account = await platform.accounts.createAccount({ name: `migration test ${++accounts}` });
  await platform.accounts.addMember(account.id, userId);
  ledge = { ...server, accountId: account.id };
});

const options = (overrides: Partial<MigrateOptions> = {}): MigrateOptions => ({
  perPage: 25,
  dryRun: false,
  maxPasses: 5,
  newHealth: ['Healthy', 'Unhealthy'],
  eventSource: ['pool', 'origin'],
  webhookIds: [],
  ...overrides,
});
const apiOf = () => new MigrationApi(clientFor(ledge), ledge.accountId);

/** Every pool that had a legacy email is covered by an enabled policy sending to all of its addresses. */
async function expectCovered(before: { id: string; notification_email: string }[]) {
  const policies = await allPolicies(ledge);
  for (const pool of before.filter((p) => p.notification_email !== '')) {
    const addresses = parseAddresses(pool.notification_email).map((a) => a.toLowerCase());
    const covering = policies.filter(
      (p) =>
        p.enabled &&
        p.alert_type === 'load_balancing_health_alert' &&
        (p.filters?.['pool_id'] ?? []).includes(pool.id) &&
        addresses.every((a) => (p.mechanisms.email ?? []).some((e) => e.id.toLowerCase() === a)),
    );
    expect(covering.length, `pool ${pool.id} covered`).toBeGreaterThanOrEqual(1);
  }
}

describe('notifications migrate: pool counts and pages', () => {
  it.each([0, 1, 25, 26, 60])('migrates %i pools with the default page size of the API (25)', async (count) => {
    await createPools(ledge, count, (i) => (i % 2 === 0 ? 'ops@example.com' : 'oncall@example.com, ops@example.com'));
    const before = await allPools(ledge);
    const report = await migrate(apiOf(), options());
    expect(report.complete).toBe(true);
    expect(report.pools_scanned).toBe(count);
    expect(report.pools_with_legacy_email).toBe(count);
    expect(report.policies_created).toHaveLength(Math.min(count, 2));
    expect(report.pages_patched).toBe(Math.ceil(count / 25));
    const after = await allPools(ledge);
    expect(after.filter((p) => p.notification_email !== '')).toEqual([]);
    await expectCovered(before);
    expect((await migrationStatus(apiOf(), 25)).complete).toBe(true);
  });

  it('migrates 1,000 pools with several address groups through the CLI (--json)', async () => {
    const groups = [
      'a@example.com',
      'b@example.com, c@example.com',
      'C@example.com , b@example.com',
      'd@example.com,e@example.com,f@example.com',
    ];
    await createPools(ledge, 1000, (i) => (i % 10 === 9 ? '' : groups[i % groups.length]!));
    const before = await allPools(ledge);
    const { code, stdout, stderr } = await runCli(['notifications', 'migrate', '--json'], { env: cliEnv(ledge) });
    expect(code, stderr).toBe(0);
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({
      complete: true,
      pools_scanned: 1000,
      pools_with_legacy_email: 900,
      pages_patched: 10,
    });
    // "b, c" and "C , b" are one recipient group: three policies, not four.
    expect(report.policies_created).toHaveLength(3);
    expect(report.duration_ms).toBeGreaterThan(0);
    await expectCovered(before);
    expect((await allPools(ledge)).every((p) => p.notification_email === '')).toBe(true);
  });

  // Regression: a policy's filters were capped at 1,000 values each, so an account with more pools on one
  // address could not be migrated (the 10,000-pool benchmark failed with 17001).
  it('migrates 1,100 pools of one address into one policy (a pool_id filter above 1,000 values)', async () => {
    await createPools(ledge, 1100, () => 'ops@example.com');
    const before = await allPools(ledge);
    const report = await migrate(apiOf(), options({ perPage: 100 }));
    expect(report.complete).toBe(true);
    expect(report.policies_created).toHaveLength(1);
    const [policy] = await allPolicies(ledge);
    expect(policy!.filters?.['pool_id']).toHaveLength(1100);
    await expectCovered(before);
  });

  it('honours custom page sizes', async () => {
    await createPools(ledge, 23, () => 'ops@example.com');
    const report = await migrate(apiOf(), options({ perPage: 5 }));
    expect(report.complete).toBe(true);
    expect(report.pages_patched).toBe(5);
    const cli = await runCli(['notifications', 'migrate', '--page-size', '0'], { env: cliEnv(ledge) });
    expect(cli.code).toBe(2);
  });
});

describe('notifications migrate: safety', () => {
  it('--dry-run prints the plan and changes nothing', async () => {
    await createPools(ledge, 30, (i) => (i < 20 ? 'ops@example.com' : 'dev@example.com'));
    const before = await allPools(ledge);
    const { code, stdout } = await runCli(['notifications', 'migrate', '--dry-run', '--page-size', '25', '--json'], {
      env: cliEnv(ledge),
    });
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.dry_run).toBe(true);
    expect(report.pools_with_legacy_email).toBe(30);
    expect(report.plan.policies).toHaveLength(2);
    expect(report.plan.policies.map((p: { action: string }) => p.action)).toEqual(['create', 'create']);
    expect(report.plan.pages_to_patch).toEqual([1, 2]);
    expect(await allPools(ledge)).toEqual(before);
    expect(await allPolicies(ledge)).toEqual([]);
    const human = await runCli(['notifications', 'migrate', '--dry-run'], { env: cliEnv(ledge) });
    expect(human.stdout).toMatch(/Dry run: nothing was changed/);
    expect(human.stdout).toMatch(/would create policy/);
  });

  it('re-running after success changes nothing', async () => {
    await createPools(ledge, 12, () => 'ops@example.com');
    await migrate(apiOf(), options());
    const policies = await allPolicies(ledge);
    const again = await migrate(apiOf(), options());
    expect(again).toMatchObject({ complete: true, pools_with_legacy_email: 0, pages_patched: 0, policies_created: [] });
    expect(await allPolicies(ledge)).toEqual(policies);
  });

  it.each([
    ['after listing (step 1)', 'Step 2/3'],
    ['after creating policies (step 2)', 'Step 3/3'],
    ['after the first patched page (step 3)', '  page 1:'],
  ])('interrupted %s, then resumed, converges without duplicate policies', async (_label, crashAt) => {
    await createPools(ledge, 40, (i) => (i % 2 ? 'ops@example.com' : 'dev@example.com, ops@example.com'));
    const before = await allPools(ledge);
    const crash = (message: string) => {
      if (message.startsWith(crashAt)) throw new Error('simulated crash');
    };
    await expect(migrate(apiOf(), options({ progress: crash }))).rejects.toThrow('simulated crash');
    const resumed = await migrate(apiOf(), options());
    expect(resumed.complete).toBe(true);
    const policies = await allPolicies(ledge);
    expect(policies).toHaveLength(2);
    await expectCovered(before);
  });

  it('a real kill (SIGKILL of the CLI) mid-run, then a re-run, converges without duplicates', async () => {
    await createPools(ledge, 300, (i) => `team-${i % 3}@example.com`);
    const before = await allPools(ledge);
    const { spawn } = await import('node:child_process');
    const { CLI_ENTRY, cleanEnv } = await import('../helpers/ledge.ts');
    const child = spawn(process.execPath, [CLI_ENTRY, 'notifications', 'migrate', '--page-size', '10'], {
      env: { ...cleanEnv(), ...cliEnv(ledge) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Kill it as soon as it starts patching pages.
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('page 3:')) child.kill('SIGKILL');
      });
      child.on('exit', () => resolve());
    });
    const { code } = await runCli(['notifications', 'migrate', '--page-size', '10'], { env: cliEnv(ledge) });
    expect(code).toBe(0);
    expect(await allPolicies(ledge)).toHaveLength(3);
    await expectCovered(before);
    expect((await allPools(ledge)).every((p) => p.notification_email === '')).toBe(true);
  });

  it('handles pools created and edited while it runs (re-lists until clean)', async () => {
    await createPools(ledge, 30, () => 'ops@example.com');
    const [editedId] = await createPools(ledge, 1, () => '', 'edited');
    const api = clientFor(ledge);
    const meddle = async (message: string) => {
      if (!message.startsWith('Step 3/3')) return;
      // After the first listing and the policies: new legacy pools, and a pool that gains an email.
      await createPools(ledge, 7, () => 'late@example.com', 'late');
      await api.request('PATCH', `/accounts/${ledge.accountId}/load_balancers/pools/${editedId}`, {
        body: { notification_email: 'ops@example.com, extra@example.com' },
      });
    };
    const report = await migrate(apiOf(), options({ progress: meddle }));
    expect(report.complete).toBe(true);
    const pools = await allPools(ledge);
    expect(pools).toHaveLength(38);
    expect(pools.every((p) => p.notification_email === '')).toBe(true);
    const policies = await allPolicies(ledge);
    expect(policies).toHaveLength(3);
    const late = policies.find((p) => (p.mechanisms.email ?? []).some((e) => e.id === 'late@example.com'));
    expect(late?.filters?.['pool_id']).toHaveLength(7);
    const edited = policies.find((p) => (p.mechanisms.email ?? []).some((e) => e.id === 'extra@example.com'));
    expect(edited?.filters?.['pool_id']).toEqual([editedId]);
    expect(edited?.mechanisms.email?.map((e) => e.id).sort()).toEqual(['extra@example.com', 'ops@example.com']);
  });

  it('reports incomplete when a legacy pool appears behind the last pass (--max-passes)', async () => {
    await createPools(ledge, 5, () => 'ops@example.com');
    let added = false;
    const report = await migrate(
      apiOf(),
      options({
        maxPasses: 1,
        progress: async (m) => {
          if (m.startsWith('  page 1:') && !added) {
            added = true;
            await createPools(ledge, 1, () => 'new@example.com', 'aaa-new');
          }
        },
      }),
    );
    expect(report.complete).toBe(false);
    expect(report.remaining_legacy_pools?.map((p) => p.name)).toEqual(['aaa-new-00000']);
    // The next run picks it up.
    expect((await migrate(apiOf(), options())).complete).toBe(true);
  });

  it('the CLI exits 1 while the migration is incomplete', async () => {
    await createPools(ledge, 20, () => 'ops@example.com');
    const { spawn } = await import('node:child_process');
    const { CLI_ENTRY, cleanEnv } = await import('../helpers/ledge.ts');
    const child = spawn(
      process.execPath,
      [CLI_ENTRY, 'notifications', 'migrate', '--page-size', '1', '--max-passes', '1'],
      {
        env: { ...cleanEnv(), ...cliEnv(ledge) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    // Once page 1 is cleared, one pool named "aaa-..." (sorting first) lands on a page the pass has left behind.
    // The pass still has 19 pages and a full verification listing ahead of it, so the pool is there in time.
    const pageOneCleared = new Promise<void>((resolve) =>
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (stdout.includes('  page 1: cleared')) resolve();
      }),
    );
    await Promise.race([pageOneCleared, exited]);
    await createPools(ledge, 1, () => 'late@example.com', 'aaa-late');
    expect(await exited).toBe(1);
    expect(stdout).toContain('Incomplete: some pools still have a legacy email.');
    expect(stdout).toContain('aaa-late-00000');
  });
});

describe('notifications migration-status', () => {
  it('shows per pool whether it is migrated, and whether the account is complete', async () => {
    await createPools(ledge, 3, (i) => (i === 2 ? '' : 'ops@example.com'));
    let status = await migrationStatus(apiOf(), 25);
    expect(status.complete).toBe(false);
    expect(status.counts).toEqual({ migrated: 0, legacy: 2, no_alerts: 1 });
    await migrate(apiOf(), options());
    const cli = await runCli(['notifications', 'migration-status', '--json'], { env: cliEnv(ledge) });
    expect(cli.code).toBe(0);
    status = JSON.parse(cli.stdout);
    expect(status.complete).toBe(true);
    expect(status.counts).toEqual({ migrated: 2, legacy: 0, no_alerts: 1 });
    const human = await runCli(['notifications', 'migration-status'], { env: cliEnv(ledge) });
    expect(human.stdout).toMatch(/Migration complete: 2 migrated, 0 with a legacy email, 1 without alerts/);
  });
});

describe('notifications migrate: options', () => {
  it('adds a webhook destination and the chosen filters to the policies it creates', async () => {
    const { createServer } = await import('node:http');
    const receiver = createServer((_req, res) => res.end('ok')).listen(0, '127.0.0.1');
    await new Promise((r) => receiver.once('listening', r));
    try {
      const port = (receiver.address() as { port: number }).port;
      const { result } = await clientFor(ledge).request<{ id: string }>(
        'POST',
        `/accounts/${ledge.accountId}/alerting/v3/destinations/webhooks`,
        {
          body: { name: 'hook', url: `http://127.0.0.1:${port}/hook` },
        },
      );
      await createPools(ledge, 2, () => 'ops@example.com');
      const cli = await runCli(
        [
          'notifications',
          'migrate',
          '--webhook',
          result.id,
          '--new-health',
          'Unhealthy',
          '--event-source',
          'pool',
          '--json',
        ],
        { env: cliEnv(ledge) },
      );
      expect(cli.code, cli.stderr).toBe(0);
      const [policy] = await allPolicies(ledge);
      expect(policy?.mechanisms.webhooks).toEqual([{ id: result.id }]);
      expect(policy?.filters).toMatchObject({ new_health: ['Unhealthy'], event_source: ['pool'] });
    } finally {
      receiver.close();
    }
  });

  it('refuses invalid option values with exit code 2', async () => {
    expect((await runCli(['notifications', 'migrate', '--new-health', 'Sick'], { env: cliEnv(ledge) })).code).toBe(2);
    expect((await runCli(['notifications', 'migrate', '--event-source', 'zone'], { env: cliEnv(ledge) })).code).toBe(2);
  });
});
