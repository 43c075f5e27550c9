import { fromSqlBool, toSqlBool, type Database } from '../../db/index.ts';
import type { EventSource, Health, HealthEvent, HealthEventBus } from './events.ts';
import { evaluatePool, nextOriginState, type OriginState, type PoolPlan } from './health-state.ts';
import type { ProbeResult } from './probe-types.ts';

export interface CheckOutcome {
  plan: PoolPlan;
  origin: { name: string; address: string };
  result: ProbeResult;
}

interface OriginRow {
  origin_name: string;
  address: string;
  healthy: number;
  successes: number;
  failures: number;
  failure_reason: string;
  response_code: number | null;
  rtt_ms: number | null;
  checked_at: string;
}

/**
 * Health state of origins and pools in SQLite, and the event log of their transitions. Every
 * Healthy <-> Unhealthy change is written together with its `lb_health_events` row and published on
 * the bus inside the same transaction, so a consumer's writes (notifications' outbox) commit with it.
 */
export class HealthStore {
  readonly #db: Database;
  readonly #bus: HealthEventBus;

  constructor(db: Database, bus: HealthEventBus) {
    this.#db = db;
    this.#bus = bus;
  }

  originStates(poolId: string): Map<string, OriginState> {
    const rows = this.#db.all<OriginRow>('SELECT * FROM lb_origin_health WHERE pool_id = ?', [poolId]);
    return new Map(rows.map((row) => [row.origin_name, toState(row)]));
  }

  poolState(poolId: string): { healthy: boolean; reason: string; changedAt: string } | undefined {
    const row = this.#db.get<{ healthy: number; reason: string; changed_at: string }>(
      'SELECT healthy, reason, changed_at FROM lb_pool_health WHERE pool_id = ?',
      [poolId],
    );
    return row ? { healthy: fromSqlBool(row.healthy), reason: row.reason, changedAt: row.changed_at } : undefined;
  }

  /**
   * Records a batch of check results in one transaction: origin states, pool states, events. Results
   * are grouped by pool so each pool's stored state is read once per batch.
   */
  record(outcomes: readonly CheckOutcome[], now = new Date().toISOString()): HealthEvent[] {
    if (outcomes.length === 0) return [];
    const byPool = new Map<string, CheckOutcome[]>();
    for (const outcome of outcomes) {
      const group = byPool.get(outcome.plan.poolId);
      if (group) group.push(outcome);
      else byPool.set(outcome.plan.poolId, [outcome]);
    }
    return this.#db.transaction(() => {
      const events: HealthEvent[] = [];
      for (const [poolId, group] of byPool) {
        if (!this.#poolExists(poolId)) continue; // deleted while the probe was in flight
        const plan = group[group.length - 1]!.plan;
        const states = this.originStates(poolId);
        for (const { origin, result } of group) {
          const previous = states.get(origin.name);
          const basis = previous && previous.address === origin.address ? previous : undefined;
          const next = nextOriginState(basis, result, plan, origin, now);
          this.#writeOrigin(poolId, next);
          states.set(origin.name, next);
          if ((basis?.healthy ?? true) !== next.healthy) {
            events.push(
              this.#event(plan, 'origin', next.healthy ? 'Healthy' : 'Unhealthy', next.failureReason, now, origin),
            );
          }
        }
        const event = this.#evaluate(plan, now, states);
        if (event) events.push(event);
      }
      return events;
    });
  }

  /**
   * After a pool's configuration changed: forgets origins that were removed, disabled or re-addressed,
   * then re-evaluates the pool (disabling origins can make it Unhealthy, which is an event too).
   */
  reconcile(plan: PoolPlan, now = new Date().toISOString()): HealthEvent | undefined {
    return this.#db.transaction(() => {
      const keep = new Map(plan.origins.map((o) => [o.name, o.address]));
      for (const state of this.originStates(plan.poolId).values()) {
        if (keep.get(state.originName) !== state.address) {
          this.#db.run('DELETE FROM lb_origin_health WHERE pool_id = ? AND origin_name = ?', [
            plan.poolId,
            state.originName,
          ]);
        }
      }
      return this.#evaluate(plan, now);
    });
  }

  /** A pool that is disabled or lost its monitor is no longer checked: its state is dropped, no event. */
  forget(poolId: string): void {
    this.#db.transaction(() => {
      this.#db.run('DELETE FROM lb_origin_health WHERE pool_id = ?', [poolId]);
      this.#db.run('DELETE FROM lb_pool_health WHERE pool_id = ?', [poolId]);
    });
  }

  events(accountId: string, poolId?: string): HealthEvent[] {
    const rows = poolId
      ? this.#db.all<EventRow>('SELECT * FROM lb_health_events WHERE account_id = ? AND pool_id = ? ORDER BY id', [
          accountId,
          poolId,
        ])
      : this.#db.all<EventRow>('SELECT * FROM lb_health_events WHERE account_id = ? ORDER BY id', [accountId]);
    return rows.map(toEvent);
  }

  #evaluate(plan: PoolPlan, now: string, states = this.originStates(plan.poolId)): HealthEvent | undefined {
    const verdict = evaluatePool(plan, states);
    const previous = this.poolState(plan.poolId);
    const wasHealthy = previous?.healthy ?? true;
    if (previous && wasHealthy === verdict.healthy) return undefined;
    this.#db.run(
      `INSERT INTO lb_pool_health (pool_id, healthy, reason, changed_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (pool_id) DO UPDATE SET healthy = excluded.healthy, reason = excluded.reason, changed_at = excluded.changed_at`,
      [plan.poolId, toSqlBool(verdict.healthy), verdict.reason, now],
    );
    if (wasHealthy === verdict.healthy) return undefined;
    return this.#event(plan, 'pool', verdict.healthy ? 'Healthy' : 'Unhealthy', verdict.reason, now);
  }

  #event(
    plan: PoolPlan,
    source: EventSource,
    health: Health,
    reason: string,
    now: string,
    origin?: { name: string; address: string },
  ): HealthEvent {
    const event: Omit<HealthEvent, 'id'> = {
      occurredAt: now,
      accountId: plan.accountId,
      poolId: plan.poolId,
      poolName: plan.poolName,
      eventSource: source,
      originName: origin?.name ?? null,
      originAddress: origin?.address ?? null,
      newHealth: health,
      reason,
      legacyNotificationEmail: plan.legacyEmail,
    };
    const { lastInsertRowid } = this.#db.run(
      `INSERT INTO lb_health_events (occurred_at, account_id, pool_id, pool_name, event_source, origin_name, origin_address,
         new_health, reason, legacy_notification_email) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        now,
        plan.accountId,
        plan.poolId,
        plan.poolName,
        source,
        event.originName,
        event.originAddress,
        health,
        reason,
        plan.legacyEmail,
      ],
    );
    const published: HealthEvent = { id: lastInsertRowid, ...event };
    this.#bus.publish(published);
    return published;
  }

  #poolExists(poolId: string): boolean {
    return this.#db.get('SELECT 1 AS x FROM lb_pools WHERE id = ?', [poolId]) !== undefined;
  }

  #writeOrigin(poolId: string, s: OriginState): void {
    this.#db.run(
      `INSERT INTO lb_origin_health (pool_id, origin_name, address, healthy, successes, failures, failure_reason, response_code, rtt_ms, checked_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (pool_id, origin_name) DO UPDATE SET address = excluded.address, healthy = excluded.healthy,
         successes = excluded.successes, failures = excluded.failures, failure_reason = excluded.failure_reason,
         response_code = excluded.response_code, rtt_ms = excluded.rtt_ms, checked_at = excluded.checked_at`,
      [
        poolId,
        s.originName,
        s.address,
        toSqlBool(s.healthy),
        s.successes,
        s.failures,
        s.failureReason,
        s.responseCode,
        s.rttMs,
        s.checkedAt,
      ],
    );
  }
}

interface EventRow {
  id: number;
  occurred_at: string;
  account_id: string;
  pool_id: string;
  pool_name: string;
  event_source: EventSource;
  origin_name: string | null;
  origin_address: string | null;
  new_health: Health;
  reason: string;
  legacy_notification_email: string;
}

function toEvent(row: EventRow): HealthEvent {
  return {
    id: row.id,
    occurredAt: row.occurred_at,
    accountId: row.account_id,
    poolId: row.pool_id,
    poolName: row.pool_name,
    eventSource: row.event_source,
    originName: row.origin_name,
    originAddress: row.origin_address,
    newHealth: row.new_health,
    reason: row.reason,
    legacyNotificationEmail: row.legacy_notification_email,
  };
}

function toState(row: OriginRow): OriginState {
  return {
    originName: row.origin_name,
    address: row.address,
    healthy: fromSqlBool(row.healthy),
    successes: row.successes,
    failures: row.failures,
    failureReason: row.failure_reason,
    responseCode: row.response_code,
    rttMs: row.rtt_ms,
    checkedAt: row.checked_at,
  };
}
