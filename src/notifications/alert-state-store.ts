import type { SqlExecutor, SqlTransaction } from '../db/index.ts';

/**
 * What the fan-out remembers between alerts: the `alert_interval` throttle, open incidents (their
 * correlation ids) and the last deprecation notice per legacy address. Every method runs in the
 * transaction of the event being fanned out, so its reads and writes commit or roll back with it.
 *
 * Races: a health event's writes are serialised per pool by the health store's lock, and an enablement
 * event's by the pool row's lock, so throttle and incident subjects (which name the pool) are never
 * written by two transactions at once. A legacy address may be shared by pools, so a notice slot takes
 * its own lock.
 */
export interface AlertStateStore {
  /** True (and the slot taken for `nowMs`) when `key` has not alerted within `intervalMs`. */
  takeThrottleSlot(tx: SqlExecutor, policyId: string, key: string, nowMs: number, intervalMs: number): Promise<boolean>;
  /** The open incident's correlation id of a subject, if any. */
  openIncident(tx: SqlExecutor, policyId: string, subject: string): Promise<string | undefined>;
  startIncident(tx: SqlExecutor, policyId: string, subject: string, correlationId: string): Promise<void>;
  endIncident(tx: SqlExecutor, policyId: string, subject: string): Promise<void>;
  /** True (and the slot taken) when this address had no deprecation notice within `intervalMs`. */
  takeNoticeSlot(
    tx: SqlTransaction,
    accountId: string,
    address: string,
    nowMs: number,
    intervalMs: number,
  ): Promise<boolean>;
}

export class SqlAlertStateStore implements AlertStateStore {
  async takeThrottleSlot(
    tx: SqlExecutor,
    policyId: string,
    key: string,
    nowMs: number,
    intervalMs: number,
  ): Promise<boolean> {
    const last = await tx.get<{ last_alert_ms: number }>(
      'SELECT last_alert_ms FROM notification_policy_throttle WHERE policy_id = ? AND subject = ?',
      [policyId, key],
    );
    if (last && nowMs - last.last_alert_ms < intervalMs) return false;
    await tx.run(
      `INSERT INTO notification_policy_throttle (policy_id, subject, last_alert_ms) VALUES (?, ?, ?)
       ON CONFLICT (policy_id, subject) DO UPDATE SET last_alert_ms = excluded.last_alert_ms`,
      [policyId, key, nowMs],
    );
    return true;
  }

  async openIncident(tx: SqlExecutor, policyId: string, subject: string): Promise<string | undefined> {
    const row = await tx.get<{ correlation_id: string }>(
      'SELECT correlation_id FROM notification_incidents WHERE policy_id = ? AND subject = ?',
      [policyId, subject],
    );
    return row?.correlation_id;
  }

  async startIncident(tx: SqlExecutor, policyId: string, subject: string, correlationId: string): Promise<void> {
    await tx.run(
      `INSERT INTO notification_incidents (policy_id, subject, correlation_id) VALUES (?, ?, ?)
       ON CONFLICT (policy_id, subject) DO UPDATE SET correlation_id = excluded.correlation_id`,
      [policyId, subject, correlationId],
    );
  }

  async endIncident(tx: SqlExecutor, policyId: string, subject: string): Promise<void> {
    await tx.run('DELETE FROM notification_incidents WHERE policy_id = ? AND subject = ?', [policyId, subject]);
  }

  /** Addresses are compared case-insensitively: stored lowercased (SQLite's column is COLLATE NOCASE too). */
  async takeNoticeSlot(
    tx: SqlTransaction,
    accountId: string,
    address: string,
    nowMs: number,
    intervalMs: number,
  ): Promise<boolean> {
    const key = address.toLowerCase();
    await tx.lock(`notifications:legacy-notice:${accountId}:${key}`);
    const last = await tx.get<{ last_notice_ms: number }>(
      'SELECT last_notice_ms FROM notification_legacy_notices WHERE account_id = ? AND address = ?',
      [accountId, key],
    );
    if (last && nowMs - last.last_notice_ms < intervalMs) return false;
    await tx.run(
      `INSERT INTO notification_legacy_notices (account_id, address, last_notice_ms) VALUES (?, ?, ?)
       ON CONFLICT (account_id, address) DO UPDATE SET last_notice_ms = excluded.last_notice_ms`,
      [accountId, key, nowMs],
    );
    return true;
  }
}
