import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, type TestLedge } from '../helpers/ledge.ts';

let ledge: TestLedge;
const cli = (...args: string[]) => runCli(args, { env: cliEnv(ledge) });
beforeAll(async () => {
  ledge = await startLedge();
});
afterAll(() => ledge.close());

describe('ledge zones / ledge lb', () => {
  it('creates a zone and a load balancer by names, updates, lists, shows and deletes them', async () => {
    const zone = await cli('zones', 'create', 'cli.example', '--json');
    expect(zone.code, zone.stderr).toBe(0);
    const zoneId = JSON.parse(zone.stdout).id as string;
    expect((await cli('zones', 'list')).stdout).toMatch(new RegExp(`cli\\.example\\s+${zoneId}\\s+active`));
    expect((await cli('zones', 'get', 'cli.example')).stdout).toMatch(/status: active\s+type: full/);

    for (const name of ['primary', 'backup']) {
      const pool = await cli('pools', 'create', name, '--origin', 'o1=192.0.2.1');
      expect(pool.code, pool.stderr).toBe(0);
    }
    const created = await cli(
      'lb',
      'create',
      '--zone',
      'cli.example',
      '--name',
      'WWW.cli.example',
      '--pools',
      'primary,backup',
      '--fallback-pool',
      'backup',
      '--steering',
      'random',
      '--session-affinity',
      'cookie',
      '--session-affinity-ttl',
      '3600',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    const lb = JSON.parse(created.stdout);
    expect(lb).toMatchObject({
      name: 'www.cli.example',
      steering_policy: 'random',
      session_affinity: 'cookie',
      session_affinity_ttl: 3600,
    });
    expect(lb.default_pools).toHaveLength(2);

    const list = await cli('lb', 'list', '--zone', zoneId);
    expect(list.stdout).toMatch(/www\.cli\.example\s+[0-9a-f]{32}\s+yes\s+2\s+random\s+cookie/);

    const geo = await cli(
      'lb',
      'update',
      'www.cli.example',
      '--zone',
      'cli.example',
      '--steering',
      'geo',
      '--disabled',
    );
    expect(geo.code, geo.stderr).toBe(0);
    expect(geo.stderr).toMatch(/Note: steering_policy "geo" is stored but not applied/);
    const shown = await cli('lb', 'get', lb.id, '--zone', 'cli.example');
    expect(shown.stdout).toMatch(/www\.cli\.example \([0-9a-f]{32}\) \[disabled\]/);
    expect(shown.stdout).toMatch(/steering: geo/);

    const health = await cli('pools', 'health', lb.default_pools[0]);
    expect(health.stdout).toContain(`Used by load balancers: www.cli.example (${lb.id})`);
    const healthJson = JSON.parse((await cli('pools', 'health', lb.default_pools[0], '--json')).stdout);
    expect(healthJson.load_balancers).toEqual([{ id: lb.id, name: 'www.cli.example' }]);

    const refused = await cli('pools', 'delete', lb.default_pools[0]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/1005/);

    expect((await cli('lb', 'delete', 'www.cli.example', '--zone', 'cli.example')).stdout).toMatch(
      /Deleted load balancer www\.cli\.example/,
    );
    expect((await cli('lb', 'list', '--zone', 'cli.example')).stdout).toMatch(/No load balancers/);
    expect((await cli('zones', 'delete', 'cli.example')).stdout).toMatch(/Deleted zone cli\.example/);
    expect((await cli('zones', 'list', '--json')).stdout.trim()).toBe('[]');
    // Each command is a new process (~1 s idle, several under the shared machine's load).
  }, 300_000);

  it('reports bad input clearly', async () => {
    const unknownZone = await cli('lb', 'list', '--zone', 'nowhere.example');
    expect(unknownZone.code).toBe(1);
    expect(unknownZone.stderr).toMatch(/no zone named "nowhere.example"/);
    await cli('zones', 'create', 'bad.example');
    const missing = await cli('lb', 'create', '--zone', 'bad.example', '--name', 'bad.example');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--pools is required/);
    const unknownPool = await cli(
      'lb',
      'create',
      '--zone',
      'bad.example',
      '--name',
      'bad.example',
      '--pools',
      'ghost',
      '--fallback-pool',
      'ghost',
    );
    expect(unknownPool.code).toBe(1);
    expect(unknownPool.stderr).toMatch(/no pool named "ghost"/);
    const badSteering = await cli('lb', 'list', '--zone', 'bad.example', '--steering', 'x');
    expect(badSteering.code).toBe(2);
    const invalid = await cli('zones', 'create', 'nodot');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/1049/);
  });
});
