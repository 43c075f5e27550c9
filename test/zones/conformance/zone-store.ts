import { expect, it } from 'vitest';
import type { DialectName, SqlDatabase } from '../../../src/db/index.ts';
import { LedgeError } from '../../../src/shared/errors.ts';
import { newId } from '../../../src/shared/ids.ts';
import type { Zone } from '../../../src/zones/schemas.ts';
import { SqlZoneStore, type ZoneQuery } from '../../../src/zones/store.ts';
import { ACCOUNT, OTHER_ACCOUNT } from '../../helpers/store-database.ts';

export interface ZoneStoreContext {
  db(): SqlDatabase;
  reopen(): SqlDatabase;
}

const NOW = '2026-01-01T00:00:00.000Z';

export function zone(name: string, fields: Partial<Zone> = {}): Zone {
  return {
    id: newId(),
    account_id: ACCOUNT,
    name,
    status: 'active',
    type: 'full',
    created_on: NOW,
    modified_on: NOW,
    ...fields,
  };
}

const query = (fields: Partial<ZoneQuery> = {}): ZoneQuery => ({
  accountIds: [ACCOUNT],
  order: 'name',
  direction: 'asc',
  offset: 0,
  limit: 50,
  ...fields,
});

/** ZoneStore: names unique across accounts, most specific zone of a hostname, filtered pages, races. */
export function zoneStoreCases(_backend: DialectName, context: ZoneStoreContext): void {
  it('stores, finds by id and name, and deletes', async () => {
    const store = new SqlZoneStore(context.db());
    const example = zone('example.com');
    await store.insert(example);
    expect(await store.get(example.id)).toEqual(example);
    expect(await store.getByName('example.com')).toEqual(example);
    expect(await store.getByName('other.com')).toBeUndefined();
    expect(await store.delete(example.id)).toBe(true);
    expect(await store.delete(example.id)).toBe(false);
    expect(await store.get(example.id)).toBeUndefined();
  });

  it('refuses a second zone of one name, in any account, with the v4 1061 (not a 500)', async () => {
    const store = new SqlZoneStore(context.db());
    await store.insert(zone('taken.com'));
    const error = await store.insert(zone('taken.com', { account_id: OTHER_ACCOUNT })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LedgeError);
    expect((error as LedgeError).code).toBe(1061);
    expect((await store.list(query({ accountIds: [ACCOUNT, OTHER_ACCOUNT] }))).total).toBe(1);
  });

  it('answers the most specific zone among a hostname’s suffixes', async () => {
    const store = new SqlZoneStore(context.db());
    await store.insert(zone('example.com'));
    const sub = zone('shop.example.com');
    await store.insert(sub);
    expect((await store.longestOf(['a.shop.example.com', 'shop.example.com', 'example.com', 'com']))?.id).toBe(sub.id);
    expect((await store.longestOf(['www.example.com', 'example.com', 'com']))?.name).toBe('example.com');
    expect(await store.longestOf(['nothing.test'])).toBeUndefined();
    expect(await store.longestOf([])).toBeUndefined();
  });

  it('lists only the given accounts, filters by exact name, pattern and status, sorts and pages', async () => {
    const store = new SqlZoneStore(context.db());
    for (const name of ['b.com', 'a.com', 'c.org']) await store.insert(zone(name));
    await store.insert(zone('pending.com', { status: 'pending' }));
    await store.insert(zone('theirs.com', { account_id: OTHER_ACCOUNT }));
    const all = await store.list(query());
    expect(all.total).toBe(4);
    expect(all.zones.map((z) => z.name)).toEqual(['a.com', 'b.com', 'c.org', 'pending.com']);
    expect((await store.list(query({ direction: 'desc' }))).zones[0]!.name).toBe('pending.com');
    expect((await store.list(query({ name: { exact: 'b.com' } }))).zones.map((z) => z.name)).toEqual(['b.com']);
    // Patterns are matched case-insensitively on both dialects (names are stored lowercased).
    expect((await store.list(query({ name: { like: '%.COM' } }))).total).toBe(3);
    expect((await store.list(query({ status: 'pending' }))).zones.map((z) => z.name)).toEqual(['pending.com']);
    const page = await store.list(query({ offset: 1, limit: 2 }));
    expect(page).toMatchObject({ total: 4 });
    expect(page.zones.map((z) => z.name)).toEqual(['b.com', 'c.org']);
    expect((await store.list(query({ accountIds: [] }))).total).toBe(0);
  });

  it('two nodes creating one name at once: exactly one wins, the other gets 1061', async () => {
    const stores = [new SqlZoneStore(context.db()), new SqlZoneStore(context.reopen())];
    const results = await Promise.allSettled(
      stores.map((store, index) =>
        store.insert(zone('race.com', { account_id: index === 0 ? ACCOUNT : OTHER_ACCOUNT })),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect((lost.reason as LedgeError).code).toBe(1061);
  });
}
