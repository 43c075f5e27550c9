import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, type TestLedge } from '../helpers/ledge.ts';
import { createPool } from './api-helpers.ts';
import { publishEvent } from './events.ts';
import { startWebhookReceiver, type WebhookReceiver } from './receivers.ts';
import { poll } from '../helpers/wait.ts';

describe('ledge notifications and ledge mail', () => {
  let ledge: TestLedge;
  let receiver: WebhookReceiver;
  let poolId: string;

  beforeAll(async () => {
    ledge = await startLedge(); // no --smtp-url: mail goes to the local mailbox
    receiver = await startWebhookReceiver();
    poolId = await createPool(ledge, { name: 'cli-pool', notification_email: 'legacy@example.com' });
  });
  afterAll(async () => {
    await ledge.close();
    await receiver.close();
  });

  const cli = (args: string[]) => runCli(args, { env: cliEnv(ledge) });

  it('creates, lists and deletes webhooks; a refused test message is a clear error', async () => {
    const created = await cli([
      'notifications',
      'webhooks',
      'create',
      '--name',
      'ops',
      '--url',
      receiver.url,
      '--secret',
      'cli-secret',
      '--json',
    ]);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const { id } = JSON.parse(created.stdout) as { id: string };
    expect(receiver.received.at(-1)?.headers['cf-webhook-auth']).toBe('cli-secret');

    const listed = await cli(['notifications', 'webhooks', 'list']);
    expect(listed.stdout).toMatch(new RegExp(`${id}\\s+ops\\s+generic\\s+${receiver.url.replace(/[/.]/g, '\\$&')}`));
    expect(listed.stdout).not.toContain('cli-secret');

    receiver.status = 500;
    const refused = await cli(['notifications', 'webhooks', 'create', '--name', 'bad', '--url', receiver.url]);
    receiver.status = 200;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/error: the webhook did not accept the test message: .*HTTP 500 \[code 17008\]/);

    const deleted = await cli(['notifications', 'webhooks', 'delete', id]);
    expect(deleted.code).toBe(0);
    expect((await cli(['notifications', 'webhooks', 'list'])).stdout).toContain('No webhook destinations.');
  });

  it('manages policies: create, list, get, update, delete, with API errors reported', async () => {
    const hook = JSON.parse(
      (await cli(['notifications', 'webhooks', 'create', '--name', 'p', '--url', receiver.url, '--json'])).stdout,
    ) as { id: string };
    const created = await cli([
      'notifications',
      'policies',
      'create',
      '--name',
      'origin down',
      '--pool',
      poolId,
      '--new-health',
      'Unhealthy',
      '--event-source',
      'origin',
      '--webhook',
      hook.id,
      '--mail-to',
      'ops@example.com',
      '--alert-interval',
      '10m',
      '--json',
    ]);
    expect(created.stderr).toBe('');
    const { id } = JSON.parse(created.stdout) as { id: string };

    const listed = await cli(['notifications', 'policies', 'list']);
    expect(listed.stdout).toMatch(new RegExp(`${id}\\s+origin down\\s+true\\s+load_balancing_health_alert`));
    expect(listed.stdout).toContain(`pool_id=${poolId} new_health=Unhealthy event_source=origin`);

    const updated = await cli([
      'notifications',
      'policies',
      'update',
      id,
      '--disable',
      '--new-health',
      'Healthy',
      'Unhealthy',
    ]);
    expect(updated.code).toBe(0);
    const got = JSON.parse((await cli(['notifications', 'policies', 'get', id])).stdout) as Record<string, unknown>;
    expect(got).toMatchObject({
      name: 'origin down',
      enabled: false,
      alert_interval: '10m',
      filters: { new_health: ['Healthy', 'Unhealthy'] },
    });

    const bad = await cli([
      'notifications',
      'policies',
      'create',
      '--name',
      'bad',
      '--new-health',
      'Sick',
      '--mail-to',
      'x@example.com',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('error: filters.new_health: "Sick" is not one of Healthy, Unhealthy [code 17004]');
    const usage = await cli(['notifications', 'policies', 'create', '--name', 'no target']);
    expect(usage.code).toBe(2);

    // A pool enablement policy: its own filter flag, refused on a health policy by the API's catalogue.
    const switches = await cli([
      'notifications',
      'policies',
      'create',
      '--name',
      'pool switched off',
      '--alert-type',
      'load_balancing_pool_enablement_alert',
      '--pool',
      poolId,
      '--pool-enabled',
      'false',
      '--webhook',
      hook.id,
      '--json',
    ]);
    expect(switches.stderr).toBe('');
    const switchesId = (JSON.parse(switches.stdout) as { id: string }).id;
    const stored = await cli(['notifications', 'policies', 'get', switchesId]);
    expect(JSON.parse(stored.stdout)).toMatchObject({
      alert_type: 'load_balancing_pool_enablement_alert',
      filters: { pool_id: [poolId], enabled: ['false'] },
    });
    const mixed = await cli([
      'notifications',
      'policies',
      'create',
      '--name',
      'x',
      '--pool-enabled',
      'true',
      '--mail-to',
      'x@example.com',
    ]);
    expect(mixed.code).toBe(1);
    expect(mixed.stderr).toContain(
      'error: filter "enabled" is not allowed for load_balancing_health_alert; allowed filters: pool_id, new_health, event_source [code 17003]',
    );

    expect((await cli(['notifications', 'policies', 'delete', id])).code).toBe(0);
    const missing = await cli(['notifications', 'policies', 'get', id]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('[code 17010]');
  });

  it('shows history, and legacy mail lands in the local mailbox read by ledge mail', async () => {
    await publishEvent(ledge.server.platform, {
      poolId,
      poolName: 'cli-pool',
      legacyNotificationEmail: 'legacy@example.com',
    });
    const mail = await waitForCli(
      () => cli(['mail', 'list', '--data-dir', ledge.dataDir, '--json']),
      (out) => (JSON.parse(out) as unknown[]).length >= 2,
    );
    const messages = JSON.parse(mail) as { id: string; to: string; subject: string }[];
    expect(messages.map((m) => m.subject).sort()).toEqual([
      '[Ledge] Action needed: pool notification_email is deprecated',
      '[Ledge] Pool health alert: Load balancing origin origin-1 (127.0.0.1) of pool cli-pool is now Unhealthy: TCP connection failed',
    ]);
    const table = await cli(['mail', 'list', '--data-dir', ledge.dataDir, '--to', 'legacy@example.com']);
    expect(table.stdout).toMatch(/ID\s+Date\s+To\s+Subject/);
    const shown = await cli(['mail', 'show', messages[0]!.id, '--data-dir', ledge.dataDir]);
    expect(shown.stdout).toContain('To: legacy@example.com');
    expect(shown.stdout).toMatch(/Subject: \[Ledge\]/);
    const unknown = await cli(['mail', 'show', 'nope', '--data-dir', ledge.dataDir]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no message nope in the local mailbox');

    const history = await cli(['notifications', 'history']);
    expect(history.stdout).toMatch(/Sent\s+Status\s+Type\s+To\s+Policy\s+Alert/);
    expect(history.stdout).toMatch(/delivered\s+email\s+legacy@example.com\s+Legacy pool notification_email/);
    const json = JSON.parse((await cli(['notifications', 'history', '--json', '--per-page', '5'])).stdout) as {
      total_count: number;
    };
    expect(json.total_count).toBeGreaterThanOrEqual(2);
  });
});

async function waitForCli(run: () => Promise<{ stdout: string }>, done: (stdout: string) => boolean): Promise<string> {
  let stdout = '';
  const matched = await poll(
    async () => {
      stdout = (await run()).stdout;
      return done(stdout);
    },
    { everyMs: 100 },
  );
  if (!matched) throw new Error(`CLI output never matched: ${stdout}`);
  return stdout;
}
