import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database, migrate } from '../../src/db/index.ts';
import { notificationMigrations } from '../../src/notifications/index.ts';
import { Outbox, type NewDelivery } from '../../src/notifications/outbox.ts';
import { tempDir } from '../helpers/ledge.ts';

const LEASE_MS = 120_000;

function delivery(eventId: number, messageId: number | null = null): Omit<NewDelivery, 'target'> {
  return {
    accountId: 'a'.repeat(32),
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

/** The in-memory handoff of new outbox rows to the dispatcher of the same process. */
describe('outbox: rows handed over in memory', () => {
  let dir: string;
  let db: Database;
  let outbox: Outbox;

  beforeEach(() => {
    dir = tempDir();
    db = new Database(join(dir, 'ledge.db'));
    // The outbox has no foreign key to accounts; only the notification tables are needed.
    db.exec('CREATE TABLE accounts (id TEXT PRIMARY KEY)');
    migrate(db, notificationMigrations);
    outbox = new Outbox(db);
    outbox.handOffTo(LEASE_MS);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const rolledBack = (fn: () => void) =>
    expect(() =>
      db.transaction(() => {
        fn();
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');

  it('hands over committed rows once, with their payload, and leases them in the table', () => {
    const now = Date.now();
    db.transaction(() => outbox.append(delivery(1), ['w1', 'w2', 'w3'], now));
    const { rows } = outbox.takeFresh(10, now);
    expect(rows.map((row) => [row.target, row.event_id, row.payload, row.attempts])).toEqual([
      ['w1', 1, '{"event":1}', 0],
      ['w2', 1, '{"event":1}', 0],
      ['w3', 1, '{"event":1}', 0],
    ]);
    const stored = db.all<{ id: number; target: string; next_attempt_ms: number }>(
      'SELECT id, target, next_attempt_ms FROM notification_outbox ORDER BY id',
    );
    expect(stored.map((row) => [row.id, row.target])).toEqual(rows.map((row) => [row.id, row.target]));
    // Leased: the table claim does not send them a second time.
    expect(outbox.claim(now + 1, 100, LEASE_MS)).toEqual([]);
    expect(outbox.takeFresh(10, now).rows).toEqual([]);
  });

  it('never hands over rows of a transaction that rolled back, even when their ids are reused', () => {
    const now = Date.now();
    rolledBack(() => outbox.append(delivery(1), ['w1', 'w2'], now));
    db.transaction(() => outbox.append(delivery(2), ['w1', 'w2', 'w3'], now));
    rolledBack(() => outbox.append(delivery(3), ['w1'], now));
    const { rows } = outbox.takeFresh(10, now);
    expect(rows.map((row) => [row.event_id, row.target])).toEqual([
      [2, 'w1'],
      [2, 'w2'],
      [2, 'w3'],
    ]);
    expect(outbox.takeFresh(10, now).rows).toEqual([]);
  });

  it('hands over at most the free capacity, the rest on later calls', () => {
    const now = Date.now();
    db.transaction(() => {
      outbox.append(delivery(1), ['w1', 'w2', 'w3'], now);
      outbox.append(delivery(2), ['w1', 'w2'], now);
    });
    expect(outbox.takeFresh(2, now).rows.map((row) => [row.event_id, row.target])).toEqual([
      [1, 'w1'],
      [1, 'w2'],
    ]);
    expect(outbox.takeFresh(0, now).rows).toEqual([]);
    expect(outbox.takeFresh(10, now).rows.map((row) => [row.event_id, row.target])).toEqual([
      [1, 'w3'],
      [2, 'w1'],
      [2, 'w2'],
    ]);
  });

  it('returns rows waiting longer than half a lease to the table, due at once', () => {
    const then = Date.now();
    db.transaction(() => outbox.append(delivery(1, outbox.saveMessage('{"event":1}')), ['w1', 'w2'], then));
    const later = then + LEASE_MS;
    const { rows, released } = outbox.takeFresh(10, later);
    expect(rows).toEqual([]);
    expect(released).toBe(true);
    expect(outbox.claim(later, 10, LEASE_MS).map((row) => [row.target, row.payload])).toEqual([
      ['w1', '{"event":1}'],
      ['w2', '{"event":1}'],
    ]);
  });

  it('leaves rows not yet handed over leased, for the next start to release', () => {
    const now = Date.now();
    db.transaction(() => outbox.append(delivery(1), ['w1', 'w2'], now));
    outbox.handOffTo(undefined);
    expect(outbox.takeFresh(10, now).rows).toEqual([]);
    expect(outbox.releaseLeases(now)).toBe(2);
    expect(outbox.claim(now, 10, LEASE_MS)).toHaveLength(2);
  });
});
