import { expect, it } from 'vitest';
import { inTransactionScope, type DialectName } from '../../../src/db/index.ts';
import { DeliveryHistory } from '../../../src/notifications/history.ts';
import { Outbox, type OutboxRow } from '../../../src/notifications/outbox.ts';
import { ACCOUNT, OTHER_ACCOUNT } from '../../helpers/store-database.ts';
import type { StoreContext } from './context.ts';
import { systemClock } from '../../../src/shared/clock.ts';

const DAY = 24 * 60 * 60 * 1000;

function row(id: number, fields: Partial<OutboxRow> = {}): OutboxRow {
  return {
    id,
    account_id: ACCOUNT,
    kind: 'alert',
    event_id: 1,
    event_ms: 0,
    policy_id: 'p'.repeat(32),
    policy_name: 'policy',
    alert_type: 'load_balancing_health_alert',
    description: `delivery ${id}`,
    mechanism_type: 'webhook',
    target: 'w1',
    message_id: null,
    request_id: null,
    payload: '',
    attempts: 0,
    created_ms: 0,
    ...fields,
  };
}

/** DeliveryHistory: attempts listed newest first within the retention, and pruned with their bodies. */
export function deliveryHistoryCases(_backend: DialectName, context: StoreContext): void {
  it('lists attempts newest first with bodies, bounded by since/before and the retention', async () => {
    const db = context.db();
    const history = new DeliveryHistory(db, 10 * DAY, systemClock);
    const outbox = new Outbox(db);
    const now = Date.now();
    const at = (daysAgo: number) => new Date(now - daysAgo * DAY).toISOString();
    await db.transaction(async (tx) => {
      const body = await outbox.saveMessage(tx, '{"text":"webhook body"}');
      const mail = await outbox.saveMessage(tx, JSON.stringify({ subject: 's', text: 'mail text' }));
      const attempt = { status: 'delivered' as const, error: null, mechanism: 'https://r/' };
      await history.record(tx, row(1), { ...attempt, messageId: body, at: at(20) }); // past the retention
      await history.record(tx, row(2), { ...attempt, messageId: body, at: at(3) });
      await history.record(tx, row(3, { mechanism_type: 'email' }), {
        ...attempt,
        mechanism: 'ops@example.com',
        messageId: mail,
        at: at(2),
      });
      await history.record(tx, row(4, { attempts: 1 }), {
        status: 'failed',
        error: 'HTTP 500',
        mechanism: 'https://r/',
        messageId: null,
        at: at(1),
      });
      await history.record(tx, row(5, { account_id: OTHER_ACCOUNT }), { ...attempt, messageId: null, at: at(1) });
    });
    const all = await history.list(ACCOUNT, { offset: 0, limit: 10 });
    expect(all.total).toBe(3);
    expect(all.items.map((item) => [item.description, item.status, item.attempt, item.alert_body])).toEqual([
      ['delivery 4', 'failed', 2, ''],
      ['delivery 3', 'delivered', 1, 'mail text'],
      ['delivery 2', 'delivered', 1, '{"text":"webhook body"}'],
    ]);
    const page = await history.list(ACCOUNT, { offset: 1, limit: 1, since: at(2.5), before: at(0.5) });
    expect(page.total).toBe(2);
    expect(page.items.map((item) => item.description)).toEqual(['delivery 3']);
  });

  it('prunes old attempts in batches, with the bodies nothing refers to any more', async () => {
    const db = context.db();
    const history = new DeliveryHistory(db, DAY, systemClock);
    const outbox = new Outbox(db);
    const now = Date.now();
    const old = new Date(now - 3 * DAY).toISOString();
    const fresh = new Date(now).toISOString();
    const ids = await inTransactionScope(db, async (scope) => {
      const { tx } = scope;
      const gone = await outbox.saveMessage(tx, 'gone');
      const shared = await outbox.saveMessage(tx, 'shared with a newer attempt');
      const pending = await outbox.saveMessage(tx, 'a pending delivery still needs it');
      await outbox.append(scope, { ...delivery(), messageId: pending }, ['w9'], now);
      const attempt = { status: 'retrying' as const, error: 'HTTP 500', mechanism: 'https://r/' };
      await history.record(tx, row(1), { ...attempt, messageId: gone, at: old });
      await history.record(tx, row(2), { ...attempt, messageId: gone, at: old });
      await history.record(tx, row(3), { ...attempt, messageId: shared, at: old });
      await history.record(tx, row(4), { ...attempt, messageId: pending, at: old });
      await history.record(tx, row(5), { ...attempt, messageId: shared, at: fresh });
      return { gone, shared, pending };
    });
    const cutoff = new Date(now - DAY).toISOString();
    expect(await history.pruneBatch(cutoff, 3)).toEqual({ attempts: 3, bodies: 1 });
    expect(await history.pruneBatch(cutoff, 3)).toEqual({ attempts: 1, bodies: 0 });
    expect(await history.pruneBatch(cutoff, 3)).toEqual({ attempts: 0, bodies: 0 });
    const bodies = await db.all<{ id: number }>('SELECT id FROM notification_messages ORDER BY id');
    expect(bodies.map((b) => b.id)).toEqual([ids.shared, ids.pending]);
    expect((await history.list(ACCOUNT, { offset: 0, limit: 10 })).total).toBe(1);
  });
}

function delivery() {
  return {
    accountId: ACCOUNT,
    kind: 'alert' as const,
    eventId: 1,
    eventMs: 0,
    policyId: null,
    policyName: 'policy',
    alertType: 'load_balancing_health_alert',
    description: 'pending',
    mechanismType: 'webhook' as const,
    messageId: null,
    payload: '',
  };
}
