import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, type TestLedge } from '../helpers/ledge.ts';
import { alerting, call, createPool, webhookPolicy } from './api-helpers.ts';
import { startWebhookReceiver, type WebhookReceiver } from './receivers.ts';
import { poll } from '../helpers/wait.ts';

/** Alert silences (issue 28 point 6): the API (the SDK's five operations), the dispatcher and the CLI. */
describe('alert silences', () => {
  let ledge: TestLedge;
  let hooks: WebhookReceiver;
  let pool: string;
  let policy: string;
  const silences = () => `${alerting(ledge)}/silences`;
  const pools = () => `/accounts/${ledge.accountId}/load_balancers/pools/${pool}`;
  const history = async () =>
    (await call(ledge, 'GET', `${alerting(ledge)}/history?per_page=100`)).body.result as {
      policy_id: string;
      status: string;
      error: string | null;
      sent: string;
    }[];
  const toggle = async (enabled: boolean) =>
    expect((await call(ledge, 'PATCH', pools(), { enabled })).status).toBe(200);
  const waitForHistory = async (count: number) => {
    const rows = await poll(
      async () => {
        const rows = await history();
        return rows.length >= count && rows;
      },
      { timeoutMs: 10_000 },
    );
    if (rows) return rows;
    throw new Error(`history has fewer than ${count} rows: ${JSON.stringify(await history())}`);
  };

  beforeAll(async () => {
    hooks = await startWebhookReceiver();
    ledge = await startLedge();
    pool = await createPool(ledge, { name: 'maint' });
    policy = await webhookPolicy(ledge, hooks.url, {
      name: 'pool switched',
      alertType: 'load_balancing_pool_enablement_alert',
      filters: { pool_id: [pool] },
    });
  });
  afterAll(async () => {
    await ledge?.close();
    await hooks?.close();
  });

  it('creates, lists, gets, updates and deletes silences; bad input is a 400 that writes nothing', async () => {
    const end = new Date(Date.now() + 3_600_000).toISOString();
    const created = await call(ledge, 'POST', silences(), [{ policy_id: policy, end_time: end }]);
    expect(created.status).toBe(200);
    const [silence] = created.body.result as { id: string; start_time: string; end_time: string }[];
    expect(silence).toMatchObject({ policy_id: policy, end_time: end });
    expect(Date.parse(silence!.start_time)).toBeLessThanOrEqual(Date.now());
    expect((await call(ledge, 'GET', `${silences()}/${silence!.id}`)).body.result).toMatchObject({ id: silence!.id });
    const later = new Date(Date.now() + 7_200_000).toISOString();
    const updated = await call(ledge, 'PUT', silences(), [{ id: silence!.id, end_time: later }]);
    expect(updated.body.result).toMatchObject([{ id: silence!.id, end_time: later }]);
    for (const body of [
      [{ policy_id: policy, end_time: 'tomorrow' }],
      [{ policy_id: policy, start_time: later, end_time: end }],
      [{ policy_id: 'f'.repeat(32), end_time: end }],
      { policy_id: policy, end_time: end },
      [],
    ]) {
      const res = await call(ledge, 'POST', silences(), body);
      expect([400, 404], JSON.stringify(body)).toContain(res.status);
      expect(res.body.success).toBe(false);
    }
    // One bad item refuses the whole update: the first is not moved either.
    const mixed = await call(ledge, 'PUT', silences(), [
      { id: silence!.id, end_time: end },
      { id: 'nope', end_time: end },
    ]);
    expect(mixed.status).toBe(404);
    expect((await call(ledge, 'GET', silences())).body.result).toMatchObject([{ id: silence!.id, end_time: later }]);
    expect((await call(ledge, 'DELETE', `${silences()}/${silence!.id}`)).status).toBe(200);
    expect((await call(ledge, 'GET', `${silences()}/${silence!.id}`)).status).toBe(404);
    expect((await call(ledge, 'GET', silences())).body.result).toEqual([]);
  });

  it('records alerts in the window as silenced without delivering them; after it, they are delivered', async () => {
    const created = await runCli(['notifications', 'silences', 'create', '--policy', policy, '--end', '2h', '--json'], {
      env: cliEnv(ledge),
    });
    expect(created.code, created.stderr).toBe(0);
    const silence = JSON.parse(created.stdout) as { id: string; end_time: string };
    expect(Date.parse(silence.end_time) - Date.now()).toBeGreaterThan(7_100_000);
    const listed = await runCli(['notifications', 'silences', 'list'], { env: cliEnv(ledge) });
    expect(listed.stdout).toMatch(new RegExp(`${silence.id}\\s+${policy}\\s+\\S+\\s+\\S+\\s+active`));

    // The receiver got the destination's test message when it was created: count from here.
    const sent = hooks.received.length;
    await toggle(false);
    const rows = await waitForHistory(1);
    expect(rows[0]).toMatchObject({ policy_id: policy, status: 'silenced' });
    expect(rows[0]!.error).toContain(`silenced by ${silence.id}`);
    // Every delivery due is sent and recorded: a silenced one that reached the receiver would be there.
    await ledge.server.platform.notifications.dispatcher.settled();
    expect(hooks.received).toHaveLength(sent);

    // Ending the silence now (the CLI's update --end now): the next alert goes out.
    const ended = await runCli(['notifications', 'silences', 'update', silence.id, '--end', 'now'], {
      env: cliEnv(ledge),
    });
    expect(ended.code, ended.stderr).toBe(0);
    await toggle(true);
    await hooks.waitFor(sent + 1);
    const after = await waitForHistory(2);
    expect(after.map((r) => r.status).sort()).toEqual(['delivered', 'silenced']);
    const deleted = await runCli(['notifications', 'silences', 'delete', silence.id], { env: cliEnv(ledge) });
    expect(deleted.code, deleted.stderr).toBe(0);
    expect((await runCli(['notifications', 'silences', 'list'], { env: cliEnv(ledge) })).stdout).toContain(
      'No silences.',
    );
  });

  it('a planned window silences nothing before it starts; the CLI refuses a bad --end', async () => {
    const start = new Date(Date.now() + 3_600_000).toISOString();
    const planned = await runCli(
      ['notifications', 'silences', 'create', '--policy', policy, '--start', start, '--end', '1h'],
      { env: cliEnv(ledge) },
    );
    expect(planned.code, planned.stderr).toBe(0);
    const before = hooks.received.length;
    await toggle(false);
    await hooks.waitFor(before + 1);
    const bad = await runCli(['notifications', 'silences', 'create', '--policy', policy, '--end', 'soon'], {
      env: cliEnv(ledge),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--end must be a time');
  });
});
