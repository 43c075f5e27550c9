import { expect, it } from 'vitest';
import type { DialectName, SqlDatabase } from '../../../src/db/index.ts';
import { HealthEventBus, type HealthEvent } from '../../../src/load-balancing/health/events.ts';
import type { PoolPlan } from '../../../src/load-balancing/health/health-state.ts';
import { SqlHealthStore, type CheckOutcome } from '../../../src/load-balancing/health/health-store.ts';
import type { ProbeResult } from '../../../src/load-balancing/health/probe-types.ts';
import { SqlPoolStore } from '../../../src/load-balancing/pool-store.ts';
import { ACCOUNT } from '../../helpers/store-database.ts';
import { pool, type StoreContext } from './fixtures.ts';
import { systemClock } from '../../../src/shared/clock.ts';

const DOWN: ProbeResult = { healthy: false, failureReason: 'TCP connection failed', responseCode: null, rttMs: null };
const UP: ProbeResult = { healthy: true, failureReason: 'No failures', responseCode: 200, rttMs: 1.5 };

let pools = 0;

async function plannedPool(db: SqlDatabase, origins = ['o1', 'o2']): Promise<PoolPlan> {
  const stored = pool(`pool-${++pools}`, { notification_email: 'ops@example.com' });
  await new SqlPoolStore(db).insert(ACCOUNT, stored);
  return {
    accountId: ACCOUNT,
    poolId: stored.id,
    poolName: stored.name,
    legacyEmail: stored.notification_email,
    minimumOrigins: 2,
    consecutiveUp: 1,
    consecutiveDown: 1,
    origins: origins.map((name, i) => ({ name, address: `192.0.2.${i + 1}` })),
  };
}

const outcome = (plan: PoolPlan, index: number, result: ProbeResult): CheckOutcome => ({
  plan,
  origin: plan.origins[index]!,
  result,
});

const summary = (events: HealthEvent[]) => events.map((e) => `${e.eventSource}:${e.originName ?? '-'}:${e.newHealth}`);

/** HealthStore: transitions and their events, published inside the transaction, and racing recorders. */
export function healthStoreCases(_backend: DialectName, context: StoreContext): void {
  it('records transitions once, with their events, and publishes them inside the transaction', async () => {
    const bus = new HealthEventBus();
    const published: HealthEvent[] = [];
    bus.subscribe(async (event, scope) => {
      // The event row is visible to the listener's transaction handle.
      expect(await scope.tx.get('SELECT id FROM lb_health_events WHERE id = ?', [event.id])).toBeDefined();
      published.push(event);
    });
    const store = new SqlHealthStore(context.db(), bus, systemClock);
    const plan = await plannedPool(context.db());
    expect(await store.record([outcome(plan, 0, UP), outcome(plan, 1, UP)])).toEqual([]);
    const down = await store.record([outcome(plan, 0, DOWN)]);
    expect(summary(down)).toEqual(['origin:o1:Unhealthy', 'pool:-:Unhealthy']);
    expect(down[1]).toMatchObject({ reason: 'TCP connection failed', legacyNotificationEmail: 'ops@example.com' });
    expect(await store.record([outcome(plan, 0, DOWN)])).toEqual([]);
    expect(summary(await store.record([outcome(plan, 0, UP)]))).toEqual(['origin:o1:Healthy', 'pool:-:Healthy']);
    const events = await store.events(ACCOUNT, plan.poolId);
    expect(events).toEqual(published);
    expect(events.map((e) => e.id)).toEqual([...events.map((e) => e.id)].sort((a, b) => a - b));
    expect((await store.originStates(plan.poolId)).get('o1')).toMatchObject({
      healthy: true,
      successes: 1,
      rttMs: 1.5,
    });
    expect(await store.poolState(plan.poolId)).toMatchObject({ healthy: true, reason: 'No failures' });
  });

  it('rolls back the state change and the event when a listener fails', async () => {
    const bus = new HealthEventBus();
    let fail = true;
    bus.subscribe(async () => {
      if (fail) throw new Error('consumer failed');
    });
    const store = new SqlHealthStore(context.db(), bus, systemClock);
    const plan = await plannedPool(context.db());
    await expect(store.record([outcome(plan, 0, DOWN)])).rejects.toThrow('consumer failed');
    expect(await store.events(ACCOUNT, plan.poolId)).toEqual([]);
    expect((await store.originStates(plan.poolId)).size).toBe(0);
    fail = false;
    expect(summary(await store.record([outcome(plan, 0, DOWN)]))).toEqual(['origin:o1:Unhealthy', 'pool:-:Unhealthy']);
  });

  it('skips pools deleted meanwhile, reconciles removed origins and forgets state', async () => {
    const store = new SqlHealthStore(context.db(), new HealthEventBus(), systemClock);
    const plan = await plannedPool(context.db());
    await new SqlPoolStore(context.db()).delete(ACCOUNT, plan.poolId);
    expect(await store.record([outcome(plan, 0, DOWN)])).toEqual([]);

    const kept = await plannedPool(context.db());
    await store.record([outcome(kept, 0, DOWN), outcome(kept, 1, UP)]);
    // o1 (the unhealthy one) is removed from the pool: it is forgotten, and the pool is Healthy again.
    const event = await store.reconcile({ ...kept, minimumOrigins: 1, origins: [kept.origins[1]!] });
    expect(event && summary([event])).toEqual(['pool:-:Healthy']);
    expect([...(await store.originStates(kept.poolId)).keys()]).toEqual(['o2']);
    await store.forget(kept.poolId);
    expect((await store.originStates(kept.poolId)).size).toBe(0);
    expect(await store.poolState(kept.poolId)).toBeUndefined();
  });

  it('two nodes recording the same failure at once raise each transition once', async () => {
    const plan = await plannedPool(context.db());
    const handles = [context.db(), context.reopen()];
    for (const db of handles) await db.get('SELECT 1 AS x'); // connected, so that the two really overlap
    // A slow consumer keeps each transaction open long enough for the other one to read the same state.
    const bus = new HealthEventBus();
    bus.subscribe(() => new Promise((resolve) => setTimeout(resolve, 100)));
    const stores = handles.map((db) => new SqlHealthStore(db, bus, systemClock));
    const recorded = await Promise.all(stores.map((store) => store.record([outcome(plan, 0, DOWN)])));
    expect(summary(recorded.flat()).sort()).toEqual(['origin:o1:Unhealthy', 'pool:-:Unhealthy']);
    expect(await stores[0]!.events(ACCOUNT, plan.poolId)).toHaveLength(2);
    expect((await stores[0]!.originStates(plan.poolId)).get('o1')?.failures).toBe(2);
  });
}
