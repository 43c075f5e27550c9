import { expect, it } from 'vitest';
import { inTransactionScope, type DialectName, type SqlDatabase } from '../../../src/db/index.ts';
import { Outbox, type NewDelivery } from '../../../src/notifications/outbox.ts';
import { ACCOUNT } from '../../helpers/store-database.ts';
import type { StoreContext } from './context.ts';

const LEASE_MS = 120_000;

function delivery(eventId: number, messageId: number | null = null): Omit<NewDelivery, 'target'> {
  return {
    accountId: ACCOUNT,
    kind: 'alert',
    eventId,
    eventMs: 0,
    policyId: 'p'.repeat(32),
    policyName: 'policy',
    alertType: 'load_balancing_health_alert',
    description: `event ${eventId}`,
    mechanismType: 'webhook',
    messageId,
    payload: `{"event":${eventId}}`,
  };
}

/** Appends in a transaction of its own that commits (or rolls back when `fail` is set). */
async function append(
  db: SqlDatabase,
  outbox: Outbox,
  batches: [Omit<NewDelivery, 'target'>, string[]][],
  nowMs: number,
  fail = false,
): Promise<void> {
  const write = inTransactionScope(db, async (scope) => {
    for (const [d, targets] of batches) await outbox.append(scope, d, targets, nowMs);
    if (fail) throw new Error('rolled back');
  });
  if (fail) await expect(write).rejects.toThrow('rolled back');
  else await write;
}

const claim = (db: SqlDatabase, outbox: Outbox, nowMs: number, limit = 100, leaseMs = LEASE_MS) =>
  db.transaction((tx) => outbox.claim(tx, nowMs, limit, leaseMs));

/** The Outbox: in-memory hand-off of committed rows, claims, leases, and two claimers racing. */
export function outboxCases(backend: DialectName, context: StoreContext): void {
  const open = () => {
    const outbox = new Outbox(context.db());
    outbox.handOffTo(LEASE_MS);
    return outbox;
  };

  it('hands over committed rows once, with their payload, and leases them in the table', async () => {
    const db = context.db();
    const outbox = open();
    const now = Date.now();
    await append(db, outbox, [[delivery(1), ['w1', 'w2', 'w3']]], now);
    const { rows } = await outbox.takeFresh(10, now);
    expect(rows.map((row) => [row.target, row.event_id, row.payload, row.attempts])).toEqual([
      ['w1', 1, '{"event":1}', 0],
      ['w2', 1, '{"event":1}', 0],
      ['w3', 1, '{"event":1}', 0],
    ]);
    const stored = await db.all<{ id: number; target: string }>(
      'SELECT id, target FROM notification_outbox ORDER BY id',
    );
    expect(stored.map((row) => [row.id, row.target])).toEqual(rows.map((row) => [row.id, row.target]));
    // Leased: the table claim does not send them a second time.
    expect(await claim(db, outbox, now + 1)).toEqual([]);
    expect((await outbox.takeFresh(10, now)).rows).toEqual([]);
    expect(await outbox.pendingCount(ACCOUNT)).toBe(3);
  });

  it('never hands over rows of a transaction that rolled back', async () => {
    const db = context.db();
    const outbox = open();
    const now = Date.now();
    await append(db, outbox, [[delivery(1), ['w1', 'w2']]], now, true);
    await append(db, outbox, [[delivery(2), ['w1', 'w2', 'w3']]], now);
    await append(db, outbox, [[delivery(3), ['w1']]], now, true);
    const { rows } = await outbox.takeFresh(10, now);
    expect(rows.map((row) => [row.event_id, row.target])).toEqual([
      [2, 'w1'],
      [2, 'w2'],
      [2, 'w3'],
    ]);
    expect((await outbox.takeFresh(10, now)).rows).toEqual([]);
    expect(await outbox.pendingCount()).toBe(3);
  });

  it('hands over at most the free capacity, the rest on later calls', async () => {
    const db = context.db();
    const outbox = open();
    const now = Date.now();
    await append(
      db,
      outbox,
      [
        [delivery(1), ['w1', 'w2', 'w3']],
        [delivery(2), ['w1', 'w2']],
      ],
      now,
    );
    const take = async (max: number) =>
      (await outbox.takeFresh(max, now)).rows.map((row) => [row.event_id, row.target]);
    expect(await take(2)).toEqual([
      [1, 'w1'],
      [1, 'w2'],
    ]);
    expect(await take(0)).toEqual([]);
    expect(await take(10)).toEqual([
      [1, 'w3'],
      [2, 'w1'],
      [2, 'w2'],
    ]);
  });

  it('returns rows waiting longer than half a lease to the table, due at once', async () => {
    const db = context.db();
    const outbox = open();
    const then = Date.now();
    await inTransactionScope(db, async (scope) => {
      const messageId = await outbox.saveMessage(scope.tx, '{"event":1}');
      await outbox.append(scope, delivery(1, messageId), ['w1', 'w2'], then);
    });
    const later = then + LEASE_MS;
    const { rows, released } = await outbox.takeFresh(10, later);
    expect(rows).toEqual([]);
    expect(released).toBe(true);
    expect((await claim(db, outbox, later)).map((row) => [row.target, row.payload]).sort()).toEqual([
      ['w1', '{"event":1}'],
      ['w2', '{"event":1}'],
    ]);
  });

  it('leaves rows not yet handed over leased, for the next start of the same owner to release', async () => {
    const db = context.db();
    const outbox = new Outbox(db, { owner: 'node-a' });
    outbox.handOffTo(LEASE_MS);
    const now = Date.now();
    await append(db, outbox, [[delivery(1), ['w1', 'w2']]], now);
    outbox.handOffTo(undefined);
    expect((await outbox.takeFresh(10, now)).rows).toEqual([]);
    // Another node's start leaves them alone; the owner's own start releases them.
    expect(await new Outbox(db, { owner: 'node-b' }).releaseLeases(now)).toBe(0);
    expect(await claim(db, outbox, now)).toEqual([]);
    expect(await outbox.releaseLeases(now)).toBe(2);
    expect(await claim(db, outbox, now)).toHaveLength(2);
  });

  it('claims due rows only, oldest first, and a claimed row again only after its lease ran out', async () => {
    const db = context.db();
    const outbox = new Outbox(db); // no hand-off: rows are due in the table at once
    const now = Date.now();
    await append(db, outbox, [[delivery(1), ['w1', 'w2', 'w3']]], now);
    const first = await claim(db, outbox, now, 2, 1_000);
    expect(first.map((row) => row.target).sort()).toEqual(['w1', 'w2']);
    expect((await claim(db, outbox, now + 1, 10, 1_000)).map((row) => row.target)).toEqual(['w3']);
    // Stale claims: not before the lease deadline, then once.
    expect(await claim(db, outbox, now + 999, 10, 1_000)).toEqual([]);
    const again = await claim(db, outbox, now + 1_000, 10, 1_000);
    expect(again.map((row) => row.target).sort()).toEqual(['w1', 'w2']);
    expect(await outbox.nextDueMs()).toBe(now + 1 + 1_000);
  });

  it('reschedules a failed row and removes delivered ones', async () => {
    const db = context.db();
    const outbox = new Outbox(db);
    const now = Date.now();
    await append(db, outbox, [[delivery(1), ['w1', 'w2']]], now);
    const rows = await claim(db, outbox, now);
    const [a, b] = rows.sort((x, y) => x.id - y.id);
    await db.transaction(async (tx) => {
      await outbox.retryLater(tx, a!.id, 1, now + 5_000, 'HTTP 500');
      await outbox.removeAll(tx, [b!.id]);
    });
    expect(await outbox.pendingCount()).toBe(1);
    expect(await claim(db, outbox, now + 4_999)).toEqual([]);
    const retried = await claim(db, outbox, now + 5_000);
    expect(retried.map((row) => [row.id, row.attempts])).toEqual([[a!.id, 1]]);
  });

  it('two claimers on one outbox: every row is claimed exactly once', async () => {
    const db = context.db();
    const other = context.reopen();
    await other.get('SELECT 1 AS x'); // connected, so that the two claimers really overlap
    const writer = new Outbox(db);
    const now = Date.now();
    const targets = Array.from({ length: 200 }, (_, i) => `w${i}`);
    await append(db, writer, [[delivery(1), targets]], now);
    const claimers = [new Outbox(db, { owner: 'a' }), new Outbox(other, { owner: 'b' })];
    const handles = [db, other];
    const claimed: number[][] = [[], []];
    // Both claim in small batches at the same time until nothing is left.
    await Promise.all(
      claimers.map(async (outbox, i) => {
        for (;;) {
          const rows = await claim(handles[i]!, outbox, now, 7);
          if (rows.length === 0) return;
          claimed[i]!.push(...rows.map((row) => row.id));
        }
      }),
    );
    const all = [...claimed[0]!, ...claimed[1]!];
    expect(all).toHaveLength(200);
    expect(new Set(all).size).toBe(200);
    if (backend === 'postgres') expect(claimed.every((ids) => ids.length > 0)).toBe(true);
  });
}
