import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PoolEnablementEvent } from '../../src/load-balancing/index.ts';
import { enablementPolicyMatches } from '../../src/notifications/enablement-fanout.ts';
import type { Policy } from '../../src/notifications/types.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { alerting, call, createPool } from './api-helpers.ts';
import {
  startSmtpReceiver,
  startWebhookReceiver,
  type ReceivedWebhook,
  type SmtpReceiver,
  type WebhookReceiver,
} from './receivers.ts';

const ALERT = 'load_balancing_pool_enablement_alert';

describe('load_balancing_pool_enablement_alert matching', () => {
  const event: PoolEnablementEvent = {
    occurredAt: '2026-11-22T10:00:00.000Z',
    accountId: 'a'.repeat(32),
    poolId: 'p'.repeat(32),
    poolName: 'web',
    enabled: false,
  };
  const policy = (filters: Record<string, string[]>) => ({ filters }) as Policy;

  it('matches every change without filters, and only the listed pools and values with them', () => {
    expect(enablementPolicyMatches(policy({}), event)).toBe(true);
    expect(enablementPolicyMatches(policy({ enabled: ['false'] }), event)).toBe(true);
    expect(enablementPolicyMatches(policy({ enabled: ['true'] }), event)).toBe(false);
    expect(enablementPolicyMatches(policy({ enabled: ['true'] }), { ...event, enabled: true })).toBe(true);
    expect(enablementPolicyMatches(policy({ pool_id: ['q'.repeat(32)] }), event)).toBe(false);
    expect(enablementPolicyMatches(policy({ pool_id: [event.poolId], enabled: ['true', 'false'] }), event)).toBe(true);
  });
});

describe('pool enablement alerts: real pool edits, webhook receiver and SMTP server', () => {
  let ledge: TestLedge;
  let hooks: WebhookReceiver;
  let smtp: SmtpReceiver;
  let web: string;
  let api: string;
  const policies: Record<string, string> = {};

  const pools = (id = '') => `/accounts/${ledge.accountId}/load_balancers/pools${id ? `/${id}` : ''}`;
  const enablementHooks = (policy: string) => (hook: ReceivedWebhook) => hook.body['policy_id'] === policies[policy];

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    hooks = await startWebhookReceiver();
    ledge = await startLedge({ flags: { smtpUrl: smtp.url } });
    web = await createPool(ledge, { name: 'web' });
    api = await createPool(ledge, { name: 'api' });
    const hook = await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, {
      name: 'receiver',
      url: hooks.url,
    });
    const webhooks = [{ id: (hook.body.result as { id: string }).id }];
    for (const [name, body] of Object.entries({
      'any pool disabled': { mechanisms: { webhooks }, filters: { enabled: ['false'] } },
      'web on or off': { mechanisms: { email: [{ id: 'oncall@example.com' }] }, filters: { pool_id: [web] } },
    })) {
      const res = await call(ledge, 'POST', `${alerting(ledge)}/policies`, {
        name,
        enabled: true,
        alert_type: ALERT,
        ...body,
      });
      expect(res.status).toBe(200);
      policies[name] = (res.body.result as { id: string }).id;
    }
  });
  afterAll(async () => {
    await ledge?.close();
    await hooks?.close();
    await smtp?.close();
  });

  it('alerts when a PATCH disables a pool, to the policies whose filters match', async () => {
    expect((await call(ledge, 'PATCH', pools(web), { enabled: false })).status).toBe(200);
    const [hook] = await hooks.waitFor(1, enablementHooks('any pool disabled'));
    expect(hook?.body).toMatchObject({
      name: 'any pool disabled',
      text: 'Load balancing pool web was disabled',
      account_id: ledge.accountId,
      policy_id: policies['any pool disabled'],
      alert_type: ALERT,
      data: { pool_id: web, pool_name: 'web', enabled: false },
    });
    const [mail] = await smtp.waitFor(1, (m) => m.subject.includes('web on or off'));
    expect(mail?.to).toEqual(['oncall@example.com']);
    expect(mail?.subject).toContain('Load balancing pool web was disabled');
    expect(mail?.text).toContain(`Pool:     web (${web})`);
  });

  it('sends nothing for an edit that leaves `enabled` as it was', async () => {
    const hooksBefore = hooks.received.length;
    const mailsBefore = smtp.received.length;
    expect((await call(ledge, 'PATCH', pools(web), { enabled: false, description: 'still off' })).status).toBe(200);
    expect((await call(ledge, 'PATCH', pools(api), { description: 'still on' })).status).toBe(200);
    // Every delivery due is sent and recorded: one that has not arrived by then is not coming.
    await ledge.server.platform.notifications.dispatcher.settled();
    expect(hooks.received.length).toBe(hooksBefore);
    expect(smtp.received.length).toBe(mailsBefore);
  });

  it('alerts when a PUT enables it again, only to the policy that covers enabling', async () => {
    const current = (await call(ledge, 'GET', pools(web))).body.result as Record<string, unknown>;
    expect((await call(ledge, 'PUT', pools(web), { ...current, enabled: true })).status).toBe(200);
    const [mail] = await smtp.waitFor(1, (m) => m.subject.includes('web was enabled'));
    expect(mail?.text).toContain('It receives traffic and is health checked again.');
    // Disabling another pool reaches the pool-wide webhook policy, not the policy filtered to "web".
    expect((await call(ledge, 'PATCH', pools(api), { enabled: false })).status).toBe(200);
    const disabled = await hooks.waitFor(2, enablementHooks('any pool disabled'));
    expect(disabled.map((h) => (h.body['data'] as { pool_name: string }).pool_name)).toEqual(['web', 'api']);
    await ledge.server.platform.notifications.dispatcher.settled();
    expect(hooks.received.filter((h) => (h.body['data'] as { enabled?: boolean })?.enabled === true)).toEqual([]);
    expect(smtp.received.filter((m) => m.subject.includes('pool api'))).toEqual([]);
  });

  it('records every delivery in the history under its alert type', async () => {
    const history = await call(ledge, 'GET', `${alerting(ledge)}/history?per_page=50`);
    const rows = history.body.result as { alert_type: string; description: string; status: string }[];
    expect(rows.map((r) => r.description).sort()).toEqual([
      'Load balancing pool api was disabled',
      'Load balancing pool web was disabled',
      'Load balancing pool web was disabled',
      'Load balancing pool web was enabled',
    ]);
    expect(rows.every((r) => r.alert_type === ALERT && r.status === 'delivered')).toBe(true);
  });

  it('rolls the pool change back with its alerts when they cannot be written', async () => {
    const fail = ledge.server.platform.poolEnablement.subscribe(() => {
      throw new Error('outbox unavailable');
    });
    try {
      const res = await call(ledge, 'PATCH', pools(api), { enabled: true });
      expect(res.status).toBe(500);
    } finally {
      fail();
    }
    const pool = (await call(ledge, 'GET', pools(api))).body.result as { enabled: boolean };
    expect(pool.enabled).toBe(false);
  });
});
