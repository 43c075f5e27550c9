import {
  fromSqlBool,
  inTransactionScope,
  toSqlBool,
  type SqlDatabase,
  type SqlExecutor,
  type TransactionScope,
} from '../../db/index.ts';
import type { EventSource, Health, HealthEvent, HealthEventBus } from './events.ts';
import { HealthSamples, type HealthRange, type HealthSamplePoint } from './health-samples.ts';
import { evaluatePool, nextOriginState, type OriginState, type PoolPlan } from './health-state.ts';
import type { ProbeResult } from './probe-types.ts';
import { isoNow } from '../../shared/time.ts';
import type { Clock } from '../../shared/clock.ts';

export interface CheckOutcome {
  plan: PoolPlan;
  origin: { name: string; address: string };
  result: ProbeResult;
}

export interface PoolState {
  healthy: boolean;
  reason: string;
  changedAt: string;
}

/**
 * Health state of origins and pools, and the event log of their transitions. Every Healthy <-> Unhealthy
 * change is written together with its `lb_health_events` row and published on the bus inside the same
 * transaction (listeners get its scope), so a consumer's writes (notifications' outbox) commit with it.
 */
export interface HealthStore {
  originStates(poolId: string): Promise<Map<string, OriginState>>;
  poolState(poolId: string): Promise<PoolState | undefined>;
  /** Records a batch of check results in one transaction; returns the transitions it recorded. */
  record(outcomes: readonly CheckOutcome[], now?: string): Promise<HealthEvent[]>;
  /**
   * After a pool's configuration changed: forgets origins that were removed, disabled or re-addressed,
   * then re-evaluates the pool (disabling origins can make it Unhealthy, which is an event too).
   */
  reconcile(plan: PoolPlan, now?: string): Promise<HealthEvent | undefined>;
  /** A pool that is disabled or lost its monitor is no longer checked: its state is dropped, no event. */
  forget(poolId: string): Promise<void>;
  /** The recorded transitions, oldest first. */
  events(accountId: string, poolId?: string): Promise<HealthEvent[]>;
  /** Health and RTT over time, from the samples each check adds (health-samples.ts). */
  series(poolId: string, range: HealthRange): Promise<HealthSamplePoint[]>;
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
 * The health store on either dialect. Every write to one pool's state takes the pool's lock first
 * (`tx.lock`, an advisory lock on PostgreSQL; SQLite writers are serial anyway), so two nodes recording
 * results of the same pool cannot both see Healthy and both record the Unhealthy transition. Pools of a
 * batch are locked in id order, so two batches never wait for each other in a cycle.
 */
export class SqlHealthStore implements HealthStore {
  readonly #db: SqlDatabase;
  readonly #bus: HealthEventBus;
  readonly #samples: HealthSamples;

  readonly #clock: Clock;

  constructor(db: SqlDatabase, bus: HealthEventBus, clock: Clock) {
    this.#clock = clock;
    this.#db = db;
    this.#bus = bus;
    this.#samples = new HealthSamples(db, clock);
  }

  series(poolId: string, range: HealthRange): Promise<HealthSamplePoint[]> {
    return this.#samples.series(poolId, range);
  }

  originStates(poolId: string): Promise<Map<string, OriginState>> {
    return this.#originStates(this.#db, poolId);
  }

  poolState(poolId: string): Promise<PoolState | undefined> {
    return this.#poolState(this.#db, poolId);
  }

  async record(outcomes: readonly CheckOutcome[], now = isoNow(this.#clock)): Promise<HealthEvent[]> {
    if (outcomes.length === 0) return [];
    const byPool = new Map<string, CheckOutcome[]>();
    for (const outcome of outcomes) {
      const group = byPool.get(outcome.plan.poolId);
      if (group) group.push(outcome);
      else byPool.set(outcome.plan.poolId, [outcome]);
    }
    const poolIds = [...byPool.keys()].sort();
    const recorded = await inTransactionScope(this.#db, async (scope) => {
      const { tx } = scope;
      const events: HealthEvent[] = [];
      for (const poolId of poolIds) {
        const group = byPool.get(poolId)!;
        await lockPool(tx, poolId);
        if (!(await this.#poolExists(tx, poolId))) continue; // deleted while the probe was in flight
        const plan = group[group.length - 1]!.plan;
        const states = await this.#originStates(tx, poolId);
        for (const { origin, result } of group) {
          const previous = states.get(origin.name);
          const basis = previous && previous.address === origin.address ? previous : undefined;
          const next = nextOriginState(basis, result, plan, origin, now);
          await this.#writeOrigin(tx, poolId, next);
          await this.#samples.addOrigin(tx, poolId, next, now);
          states.set(origin.name, next);
          if ((basis?.healthy ?? true) !== next.healthy) {
            const health = next.healthy ? 'Healthy' : 'Unhealthy';
            events.push(await this.#event(scope, plan, 'origin', health, next.failureReason, now, origin));
          }
        }
        const event = await this.#evaluate(scope, plan, now, states);
        if (event) events.push(event);
        const pool = await this.#poolState(tx, poolId);
        if (pool) await this.#samples.addPool(tx, poolId, pool.healthy, now);
      }
      return events;
    });
    // Old samples are downsampled outside the checks' transaction; a failure here loses no check.
    await this.#samples.maybeRollUp(this.#clock.now()).catch(() => undefined);
    return recorded;
  }

  reconcile(plan: PoolPlan, now = isoNow(this.#clock)): Promise<HealthEvent | undefined> {
    return inTransactionScope(this.#db, async (scope) => {
      const { tx } = scope;
      await lockPool(tx, plan.poolId);
      const keep = new Map(plan.origins.map((o) => [o.name, o.address]));
      const states = await this.#originStates(tx, plan.poolId);
      for (const state of states.values()) {
        if (keep.get(state.originName) !== state.address) {
          await tx.run('DELETE FROM lb_origin_health WHERE pool_id = ? AND origin_name = ?', [
            plan.poolId,
            state.originName,
          ]);
          states.delete(state.originName);
        }
      }
      if (!(await this.#poolExists(tx, plan.poolId))) return undefined;
      return this.#evaluate(scope, plan, now, states);
    });
  }

  async forget(poolId: string): Promise<void> {
    await this.#db.transaction(async (tx) => {
      await lockPool(tx, poolId);
      await tx.run('DELETE FROM lb_origin_health WHERE pool_id = ?', [poolId]);
      await tx.run('DELETE FROM lb_pool_health WHERE pool_id = ?', [poolId]);
    });
  }

  async events(accountId: string, poolId?: string): Promise<HealthEvent[]> {
    const rows = poolId
      ? await this.#db.all<EventRow>(
          'SELECT * FROM lb_health_events WHERE account_id = ? AND pool_id = ? ORDER BY id',
          [accountId, poolId],
        )
      : await this.#db.all<EventRow>('SELECT * FROM lb_health_events WHERE account_id = ? ORDER BY id', [accountId]);
    return rows.map(toEvent);
  }

  async #originStates(executor: SqlExecutor, poolId: string): Promise<Map<string, OriginState>> {
    const rows = await executor.all<OriginRow>('SELECT * FROM lb_origin_health WHERE pool_id = ?', [poolId]);
    return new Map(rows.map((row) => [row.origin_name, toState(row)]));
  }

  async #poolState(executor: SqlExecutor, poolId: string): Promise<PoolState | undefined> {
    const row = await executor.get<{ healthy: number; reason: string; changed_at: string }>(
      'SELECT healthy, reason, changed_at FROM lb_pool_health WHERE pool_id = ?',
      [poolId],
    );
    return row ? { healthy: fromSqlBool(row.healthy), reason: row.reason, changedAt: row.changed_at } : undefined;
  }

  async #evaluate(
    scope: TransactionScope,
    plan: PoolPlan,
    now: string,
    states: ReadonlyMap<string, OriginState>,
  ): Promise<HealthEvent | undefined> {
    const verdict = evaluatePool(plan, states);
    const previous = await this.#poolState(scope.tx, plan.poolId);
    const wasHealthy = previous?.healthy ?? true;
    if (previous && wasHealthy === verdict.healthy) return undefined;
    await scope.tx.run(
      `INSERT INTO lb_pool_health (pool_id, healthy, reason, changed_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (pool_id) DO UPDATE SET healthy = excluded.healthy, reason = excluded.reason, changed_at = excluded.changed_at`,
      [plan.poolId, toSqlBool(verdict.healthy), verdict.reason, now],
    );
    if (wasHealthy === verdict.healthy) return undefined;
    return this.#event(scope, plan, 'pool', verdict.healthy ? 'Healthy' : 'Unhealthy', verdict.reason, now);
  }

  async #event(
    scope: TransactionScope,
    plan: PoolPlan,
    source: EventSource,
    health: Health,
    reason: string,
    now: string,
    origin?: { name: string; address: string },
  ): Promise<HealthEvent> {
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
    const row = await scope.tx.get<{ id: number }>(
      `INSERT INTO lb_health_events (occurred_at, account_id, pool_id, pool_name, event_source, origin_name, origin_address,
         new_health, reason, legacy_notification_email) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
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
    const published: HealthEvent = { id: row!.id, ...event };
    await this.#bus.publish(published, scope);
    return published;
  }

  async #poolExists(tx: SqlExecutor, poolId: string): Promise<boolean> {
    return (await tx.get('SELECT 1 AS x FROM lb_pools WHERE id = ?', [poolId])) !== undefined;
  }

  async #writeOrigin(tx: SqlExecutor, poolId: string, s: OriginState): Promise<void> {
    await tx.run(
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

/** Serialises the writers of one pool's health state (see SqlHealthStore). */
function lockPool(tx: { lock(name: string): Promise<void> }, poolId: string): Promise<void> {
  return tx.lock(`load-balancing:health:${poolId}`);
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
