import { expect, it } from 'vitest';
import type { DialectName } from '../../../src/db/index.ts';
import { SqlMonitorStore } from '../../../src/load-balancing/monitor-store.ts';
import { SqlPoolStore } from '../../../src/load-balancing/pool-store.ts';
import type { Pool } from '../../../src/load-balancing/pool-schemas.ts';
import { LedgeError } from '../../../src/shared/errors.ts';
import { ACCOUNT, OTHER_ACCOUNT } from '../../helpers/store-database.ts';
import { monitor, pool, type StoreContext } from './fixtures.ts';

const codeOf = (error: unknown) => (error instanceof LedgeError ? error.code : error);

/** PoolStore: reads, pages in byte order, constraint errors, transactional updates, and racing writers. */
export function poolStoreCases(_backend: DialectName, context: StoreContext): void {
  it('stores, reads, lists by name in byte order with totals, and deletes', async () => {
    const store = new SqlPoolStore(context.db());
    const pools = ['beta', 'Zulu', 'alpha', 'B-side'].map((name) => pool(name));
    for (const p of pools) await store.insert(ACCOUNT, p);
    await store.insert(OTHER_ACCOUNT, pool('alpha'));
    expect(await store.get(ACCOUNT, pools[0]!.id)).toEqual(pools[0]);
    expect(await store.get(OTHER_ACCOUNT, pools[0]!.id)).toBeUndefined();
    const page = await store.list(ACCOUNT, { offset: 1, limit: 2 });
    expect(page.total).toBe(4);
    // Byte order, as SQLite's BINARY: upper case before lower case.
    expect(page.pools.map((p) => p.name)).toEqual(['Zulu', 'alpha']);
    expect((await store.list(ACCOUNT, { offset: 0, limit: 10 })).pools.map((p) => p.name)).toEqual([
      'B-side',
      'Zulu',
      'alpha',
      'beta',
    ]);
    expect(await store.nameTaken(ACCOUNT, 'beta')).toBe(true);
    expect(await store.nameTaken(ACCOUNT, 'beta', pools[0]!.id)).toBe(false);
    expect(await store.nameTaken(ACCOUNT, 'BETA')).toBe(false);
    expect(await store.delete(ACCOUNT, pools[0]!.id)).toBe(true);
    expect(await store.delete(ACCOUNT, pools[0]!.id)).toBe(false);
    expect((await store.list(ACCOUNT, { offset: 0, limit: 10 })).total).toBe(3);
  });

  it('finds pools by monitor, monitored pools across accounts, and legacy emails', async () => {
    const store = new SqlPoolStore(context.db());
    const monitors = new SqlMonitorStore(context.db());
    const m = monitor();
    await monitors.insert(ACCOUNT, m);
    const watched = pool('watched', { monitor: m.id, notification_email: 'a@example.com' });
    await store.insert(ACCOUNT, watched);
    await store.insert(ACCOUNT, pool('plain'));
    expect((await store.listByMonitor(ACCOUNT, m.id)).map((p) => p.name)).toEqual(['watched']);
    expect(await store.listMonitored()).toEqual([{ accountId: ACCOUNT, pool: watched }]);
    expect((await store.list(ACCOUNT, { monitorId: m.id, offset: 0, limit: 10 })).total).toBe(1);
    expect(await store.countWithLegacyEmail(ACCOUNT)).toBe(1);
    expect(await store.countWithLegacyEmail(OTHER_ACCOUNT)).toBe(0);
  });

  it('maps a taken name to 1003 and an unknown monitor to a validation error', async () => {
    const store = new SqlPoolStore(context.db());
    await store.insert(ACCOUNT, pool('taken'));
    await expect(store.insert(ACCOUNT, pool('taken')).catch(codeOf)).resolves.toBe(1003);
    await expect(store.insert(ACCOUNT, pool('ghost', { monitor: 'f'.repeat(32) })).catch(codeOf)).resolves.toBe(1002);
    const other = pool('other');
    await store.insert(ACCOUNT, other);
    await expect(store.update(ACCOUNT, { ...other, name: 'taken' }).catch(codeOf)).resolves.toBe(1003);
    expect((await store.get(ACCOUNT, other.id))?.name).toBe('other');
  });

  it('two creators of one name: one wins, the other gets 1003', async () => {
    const handles = [context.db(), context.reopen()];
    for (const db of handles) await db.get('SELECT 1 AS x'); // connected, so that the two really overlap
    const stores = handles.map((db) => new SqlPoolStore(db));
    const outcomes = await Promise.all(
      stores.map((store) => store.insert(ACCOUNT, pool('contested')).then(() => 'created', codeOf)),
    );
    expect(outcomes.sort()).toEqual([1003, 'created']);
    expect((await stores[0]!.list(ACCOUNT, { offset: 0, limit: 10 })).total).toBe(1);
  });

  it('update runs `within` in its transaction with the stored pool, and rolls back with it', async () => {
    const store = new SqlPoolStore(context.db());
    const original = pool('edited');
    await store.insert(ACCOUNT, original);
    const seen: (Pool | undefined)[] = [];
    await store.update(ACCOUNT, { ...original, description: 'v2' }, async (previous, scope) => {
      seen.push(previous);
      // The write is visible inside the transaction.
      const row = await scope.tx.get<{ data: string }>('SELECT data FROM lb_pools WHERE id = ?', [original.id]);
      expect(JSON.parse(row!.data).description).toBe('v2');
    });
    expect(seen).toEqual([original]);
    await expect(
      store.update(ACCOUNT, { ...original, description: 'v3' }, async () => {
        throw new Error('consumer failed');
      }),
    ).rejects.toThrow('consumer failed');
    expect((await store.get(ACCOUNT, original.id))?.description).toBe('v2');
  });

  it('two concurrent edits that both disable a pool: only one sees it enabled before', async () => {
    const original = pool('toggled', { enabled: true });
    await new SqlPoolStore(context.db()).insert(ACCOUNT, original);
    const handles = [context.db(), context.reopen()];
    for (const db of handles) await db.get('SELECT 1 AS x');
    const stores = handles.map((db) => new SqlPoolStore(db));
    const sawEnabled: boolean[] = [];
    await Promise.all(
      stores.map((store) =>
        store.update(ACCOUNT, { ...original, enabled: false }, async (previous) => {
          sawEnabled.push(previous?.enabled ?? false);
          // Hold the transaction a moment so that the two overlap.
          await new Promise((resolve) => setTimeout(resolve, 50));
        }),
      ),
    );
    expect(sawEnabled.sort()).toEqual([false, true]);
  });

  it('updatePage changes exactly one page in one transaction', async () => {
    const store = new SqlPoolStore(context.db());
    for (const name of ['a', 'b', 'c']) await store.insert(ACCOUNT, pool(name));
    const page = await store.updatePage(ACCOUNT, { offset: 1, limit: 1 }, (p) => ({
      ...p,
      notification_email: 'x@example.com',
    }));
    expect(page.total).toBe(3);
    expect(page.pools.map((p) => p.name)).toEqual(['b']);
    const emails = (await store.list(ACCOUNT, { offset: 0, limit: 10 })).pools.map((p) => p.notification_email);
    expect(emails).toEqual(['', 'x@example.com', '']);
    expect(await store.countWithLegacyEmail(ACCOUNT)).toBe(1);
  });
}
