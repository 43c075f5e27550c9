import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, type TestLedge } from '../helpers/ledge.ts';
import { TestOrigin, waitFor } from './helpers.ts';

process.env['LEDGE_LB_MIN_INTERVAL'] = '1';

let ledge: TestLedge;
let origin: TestOrigin;
const cli = (...args: string[]) => runCli(args, { env: cliEnv(ledge) });
beforeAll(async () => {
  ledge = await startLedge();
  origin = await TestOrigin.start();
});
afterAll(async () => {
  await ledge.close();
  await origin.stop();
});

describe('ledge pools / ledge monitors', () => {
  it('manages monitors and pools end to end, and shows health', async () => {
    const created = await cli(
      'monitors',
      'create',
      '--interval',
      '1',
      '--timeout',
      '1',
      '--retries',
      '0',
      '--expected-codes',
      '2xx',
      '--header',
      'Host: app.test',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    const monitor = JSON.parse(created.stdout);
    expect(monitor).toMatchObject({ interval: 1, header: { Host: ['app.test'] }, expected_codes: '2xx' });

    const list = await cli('monitors', 'list');
    expect(list.stdout).toContain(monitor.id);
    expect((await cli('monitors', 'update', monitor.id, '--description', 'app check')).stdout).toContain(
      'Updated monitor',
    );
    expect((await cli('monitors', 'get', monitor.id)).stdout).toContain('description: app check');

    const pool = JSON.parse(
      (await cli('pools', 'create', 'web', '--origin', `a=127.0.0.1:${origin.port}`, '--monitor', monitor.id, '--json'))
        .stdout,
    );
    expect(pool).toMatchObject({
      name: 'web',
      monitor: monitor.id,
      origins: [{ name: 'a', address: '127.0.0.1', port: origin.port }],
    });
    expect((await cli('pools', 'list')).stdout).toMatch(/web\s+[0-9a-f]{32}\s+yes\s+(healthy|unhealthy|unchecked)\s+1/);
    expect(
      (await cli('pools', 'update', pool.id, '--description', 'front', '--notification-email', 'ops@example.com')).code,
    ).toBe(0);
    const shown = await cli('pools', 'get', pool.id);
    expect(shown.stdout).toContain('front');
    expect(shown.stdout).toContain('notification_email (deprecated): ops@example.com');

    await waitFor(() => (origin.requests.length > 0 ? true : undefined));
    expect(origin.requests[0]?.headers.host).toBe('app.test');
    const health = await waitFor(async () => {
      const out = (await cli('pools', 'health', pool.id)).stdout;
      return out.includes('200') ? out : undefined;
    });
    expect(health).toMatch(/Pool Healthy/);
    // Each origin by name, address and port (issue 28).
    expect(health).toMatch(/Origin\s+Address\s+Port\s+Health/);
    expect(health).toMatch(
      new RegExp(`a\\s+127\\.0\\.0\\.1\\s+${origin.port}\\s+Healthy\\s+\\d+\\.\\dms\\s+200\\s+No failures`),
    );

    const refused = await cli('monitors', 'delete', monitor.id);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/code 1005/);
    expect((await cli('pools', 'delete', pool.id)).stdout).toContain(`Deleted pool ${pool.id}`);
    expect((await cli('monitors', 'delete', monitor.id)).code).toBe(0);
    expect((await cli('pools', 'list')).stdout).toContain('No pools.');
  });

  it('reports API validation errors with their code, and usage errors with exit code 2', async () => {
    const bad = await cli('pools', 'create', 'bad name', '--origin', 'a=192.0.2.1');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/validation failed \[code 1002\]/);
    const usage = await cli('pools', 'create', 'x', '--origin', 'no-equals-sign');
    expect(usage.code).toBe(2);
    const missing = await cli('pools', 'get', 'f'.repeat(32));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/not found/);
  });
});
