import { expect, it } from 'vitest';
import type { DialectName } from '../../../src/db/index.ts';
import { SqlMonitorStore } from '../../../src/load-balancing/monitor-store.ts';
import { SqlPoolStore } from '../../../src/load-balancing/pool-store.ts';
import { LedgeError } from '../../../src/shared/errors.ts';
import { ACCOUNT, OTHER_ACCOUNT } from '../../helpers/store-database.ts';
import { monitor, pool, type StoreContext } from './fixtures.ts';

/** MonitorStore: per-account reads, cross-account lookups, updates, and deletes a pool still needs. */
export function monitorStoreCases(_backend: DialectName, context: StoreContext): void {
  it('stores, reads per account in creation order, updates and deletes', async () => {
    const store = new SqlMonitorStore(context.db());
    const first = monitor({ created_on: '2026-01-01T00:00:00.000Z', description: 'first' });
    const second = monitor({ created_on: '2026-01-02T00:00:00.000Z', description: 'second' });
    await store.insert(ACCOUNT, second);
    await store.insert(ACCOUNT, first);
    await store.insert(OTHER_ACCOUNT, monitor());
    expect((await store.list(ACCOUNT)).map((m) => m.description)).toEqual(['first', 'second']);
    expect(await store.get(OTHER_ACCOUNT, first.id)).toBeUndefined();
    await store.update(ACCOUNT, { ...first, interval: 30, modified_on: '2026-02-01T00:00:00.000Z' });
    expect((await store.get(ACCOUNT, first.id))?.interval).toBe(30);
    expect(await store.delete(OTHER_ACCOUNT, first.id)).toBe(false);
    expect(await store.delete(ACCOUNT, first.id)).toBe(true);
    expect(await store.list(ACCOUNT)).toEqual([second]);
  });

  it('getMany finds monitors by id across accounts and skips unknown ids', async () => {
    const store = new SqlMonitorStore(context.db());
    const a = monitor();
    const b = monitor();
    await store.insert(ACCOUNT, a);
    await store.insert(OTHER_ACCOUNT, b);
    const found = await store.getMany([a.id, b.id, a.id, 'f'.repeat(32)]);
    expect([...found.keys()].sort()).toEqual([a.id, b.id].sort());
    expect(found.get(b.id)).toEqual(b);
    expect((await store.getMany([])).size).toBe(0);
  });

  it('refuses to delete a monitor a pool uses (412, not a 500)', async () => {
    const store = new SqlMonitorStore(context.db());
    const m = monitor();
    await store.insert(ACCOUNT, m);
    await new SqlPoolStore(context.db()).insert(ACCOUNT, pool('user', { monitor: m.id }));
    const error = await store.delete(ACCOUNT, m.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LedgeError);
    expect((error as LedgeError).status).toBe(412);
    expect(await store.get(ACCOUNT, m.id)).toEqual(m);
  });
}
