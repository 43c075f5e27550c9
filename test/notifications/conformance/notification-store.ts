import { expect, it } from 'vitest';
import type { DialectName } from '../../../src/db/index.ts';
import { SqlAlertStateStore } from '../../../src/notifications/alert-state-store.ts';
import { SqlNotificationStore } from '../../../src/notifications/store.ts';
import type { Policy, Webhook } from '../../../src/notifications/types.ts';
import { newId } from '../../../src/shared/ids.ts';
import { ACCOUNT, OTHER_ACCOUNT } from '../../helpers/store-database.ts';
import type { StoreContext } from './context.ts';

function policy(fields: Partial<Policy> = {}): Policy {
  return {
    id: newId(),
    account_id: ACCOUNT,
    name: 'policy',
    description: '',
    enabled: true,
    alert_type: 'load_balancing_health_alert',
    mechanisms: { webhooks: [{ id: 'w'.repeat(32) }] },
    filters: { pool_id: ['p1'] },
    alert_interval: null,
    created: new Date().toISOString(),
    modified: new Date().toISOString(),
    ...fields,
  };
}

function webhook(fields: Partial<Webhook> = {}): Webhook {
  return {
    id: newId(),
    account_id: ACCOUNT,
    name: 'hook',
    url: 'https://example.com/hook',
    type: 'generic',
    secret_sealed: 'sealed',
    created_at: new Date().toISOString(),
    last_success: null,
    last_failure: null,
    ...fields,
  };
}

/** NotificationStore (policies, webhooks) and AlertStateStore (throttles, incidents, notice slots). */
export function notificationStoreCases(_backend: DialectName, context: StoreContext): void {
  it('stores policies per account: create, read back with JSON fields and booleans, update, delete', async () => {
    const store = new SqlNotificationStore(context.db());
    const first = policy({ name: 'first', created: '2026-01-01T00:00:00.000Z' });
    const second = policy({ name: 'second', enabled: false, created: '2026-01-02T00:00:00.000Z' });
    await store.insertPolicy(second);
    await store.insertPolicy(first);
    await store.insertPolicy(policy({ account_id: OTHER_ACCOUNT }));
    expect(await store.getPolicy(ACCOUNT, second.id)).toEqual(second);
    expect(await store.getPolicy(OTHER_ACCOUNT, second.id)).toBeUndefined();
    expect((await store.listPolicies(ACCOUNT)).map((p) => p.name)).toEqual(['first', 'second']);
    await store.updatePolicy({ ...second, enabled: true, alert_interval: '1h', filters: {} });
    expect(await store.getPolicy(ACCOUNT, second.id)).toMatchObject({
      enabled: true,
      alert_interval: '1h',
      filters: {},
    });
    const enabled = await context
      .db()
      .transaction((tx) => store.enabledPolicyRows(tx, ACCOUNT, 'load_balancing_health_alert'));
    expect(enabled.map((row) => row.name).sort()).toEqual(['first', 'second']);
    expect(await store.deletePolicy(OTHER_ACCOUNT, first.id)).toBe(false);
    expect(await store.deletePolicy(ACCOUNT, first.id)).toBe(true);
    expect((await store.listPolicies(ACCOUNT)).map((p) => p.name)).toEqual(['second']);
  });

  it('stores webhooks, finds the policies that use one, resolves targets and records outcomes', async () => {
    const db = context.db();
    const store = new SqlNotificationStore(db);
    const hook = webhook();
    const other = webhook({ name: 'other', created_at: '2999-01-01T00:00:00.000Z' });
    await store.insertWebhook(hook);
    await store.insertWebhook(other);
    expect(await store.getWebhook(ACCOUNT, hook.id)).toEqual(hook);
    expect(await store.getWebhook(OTHER_ACCOUNT, hook.id)).toBeUndefined();
    await store.updateWebhook({ ...hook, name: 'renamed', secret_sealed: null });
    expect(await store.getWebhook(ACCOUNT, hook.id)).toMatchObject({ name: 'renamed', secret_sealed: null });
    expect((await store.listWebhooks(ACCOUNT)).map((w) => w.name)).toEqual(['renamed', 'other']);
    await store.insertPolicy(policy({ name: 'user', mechanisms: { webhooks: [{ id: hook.id }] } }));
    expect(await store.policiesUsingWebhook(ACCOUNT, hook.id)).toEqual(['user']);
    expect(await store.policiesUsingWebhook(ACCOUNT, other.id)).toEqual([]);
    const targets = await store.webhookTargets([
      { accountId: ACCOUNT, webhookId: hook.id },
      { accountId: ACCOUNT, webhookId: hook.id },
      { accountId: OTHER_ACCOUNT, webhookId: other.id },
    ]);
    expect([...targets.keys()]).toEqual([hook.id]);
    await db.transaction((tx) =>
      store.markWebhookOutcomes(
        tx,
        new Map([
          [hook.id, true],
          [other.id, false],
        ]),
        '2026-03-01T00:00:00.000Z',
      ),
    );
    expect((await store.getWebhook(ACCOUNT, hook.id))?.last_success).toBe('2026-03-01T00:00:00.000Z');
    expect((await store.getWebhook(ACCOUNT, other.id))?.last_failure).toBe('2026-03-01T00:00:00.000Z');
    expect(await store.deleteWebhook(ACCOUNT, other.id)).toBe(true);
    expect(await store.deleteWebhook(ACCOUNT, other.id)).toBe(false);
  });

  it('throttles per policy and key, and keeps one open incident per subject', async () => {
    const db = context.db();
    const notifications = new SqlNotificationStore(db);
    const p = policy();
    await notifications.insertPolicy(p);
    const state = new SqlAlertStateStore();
    const slot = (key: string, nowMs: number) =>
      db.transaction((tx) => state.takeThrottleSlot(tx, p.id, key, nowMs, 1_000));
    expect(await slot('pool:1', 10_000)).toBe(true);
    expect(await slot('pool:1', 10_999)).toBe(false);
    expect(await slot('pool:2', 10_500)).toBe(true);
    expect(await slot('pool:1', 11_000)).toBe(true);
    await db.transaction(async (tx) => {
      expect(await state.openIncident(tx, p.id, 'pool:1')).toBeUndefined();
      await state.startIncident(tx, p.id, 'pool:1', 'c1');
      expect(await state.openIncident(tx, p.id, 'pool:1')).toBe('c1');
      await state.endIncident(tx, p.id, 'pool:1');
      expect(await state.openIncident(tx, p.id, 'pool:1')).toBeUndefined();
    });
  });

  it('gives one deprecation-notice slot per address per interval, whatever its case, also to racing nodes', async () => {
    const handles = [context.db(), context.reopen()];
    for (const db of handles) await db.get('SELECT 1 AS x');
    const state = new SqlAlertStateStore();
    const take = (index: number, address: string, nowMs: number) =>
      handles[index]!.transaction(async (tx) => {
        const taken = await state.takeNoticeSlot(tx, ACCOUNT, address, nowMs, 1_000);
        // Holds the transaction open so that the other node's overlaps it (a barrier would deadlock SQLite's
        // single writer): part of the race this test makes, not a wait for a result.
        await new Promise((resolve) => setTimeout(resolve, 50));
        return taken;
      });
    const raced = await Promise.all([take(0, 'Ops@Example.com', 5_000), take(1, 'ops@example.com', 5_000)]);
    expect(raced.sort()).toEqual([false, true]);
    expect(await take(0, 'OPS@example.com', 5_999)).toBe(false);
    expect(await take(1, 'ops@example.com', 6_000)).toBe(true);
  });
}
