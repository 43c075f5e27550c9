import { expect, it } from 'vitest';
import type { DialectName } from '../../../src/db/index.ts';
import type { LoadBalancer } from '../../../src/load-balancing/load-balancers/schemas.ts';
import { SqlLoadBalancerStore } from '../../../src/load-balancing/load-balancers/store.ts';
import { SqlPoolStore } from '../../../src/load-balancing/pool-store.ts';
import { LedgeError } from '../../../src/shared/errors.ts';
import { newId } from '../../../src/shared/ids.ts';
import { SqlZoneStore } from '../../../src/zones/store.ts';
import { ACCOUNT, OTHER_ACCOUNT } from '../../helpers/store-database.ts';
import { zone } from '../../zones/conformance/zone-store.ts';
import { pool, type StoreContext } from './fixtures.ts';

const NOW = '2026-01-01T00:00:00.000Z';

function loadBalancer(
  name: string,
  pools: { default: string[]; fallback: string },
  fields: Partial<LoadBalancer> = {},
) {
  return {
    id: newId(),
    created_on: NOW,
    modified_on: NOW,
    zone_name: name.split('.').slice(-2).join('.'),
    name,
    description: '',
    default_pools: pools.default,
    fallback_pool: pools.fallback,
    enabled: true,
    proxied: true,
    ttl: 30,
    steering_policy: 'off',
    session_affinity: 'none',
    ...fields,
  } as LoadBalancer;
}

/** Two pools and a zone in ACCOUNT (and a zone in OTHER_ACCOUNT), as the service would have created them. */
async function setUp(context: StoreContext) {
  const pools = new SqlPoolStore(context.db());
  const [first, second] = [pool('first'), pool('second')];
  await pools.insert(ACCOUNT, first);
  await pools.insert(ACCOUNT, second);
  const zones = new SqlZoneStore(context.db());
  const mine = zone('example.com');
  const theirs = zone('example.org', { account_id: OTHER_ACCOUNT });
  await zones.insert(mine);
  await zones.insert(theirs);
  return { first, second, mine, theirs, place: { accountId: ACCOUNT, zoneId: mine.id } };
}

/** LoadBalancerStore: hostnames unique everywhere, pool references kept in step, zone removal, races. */
export function loadBalancerStoreCases(_backend: DialectName, context: StoreContext): void {
  it('stores, lists a zone by hostname, finds by hostname anywhere, updates and deletes', async () => {
    const { first, second, mine, place } = await setUp(context);
    const store = new SqlLoadBalancerStore(context.db());
    const www = loadBalancer('www.example.com', { default: [first.id], fallback: second.id });
    const api = loadBalancer('api.example.com', { default: [second.id], fallback: second.id });
    await store.insert(place, www);
    await store.insert(place, api);
    expect((await store.list(mine.id)).map((lb) => lb.name)).toEqual(['api.example.com', 'www.example.com']);
    expect(await store.get(mine.id, www.id)).toEqual(www);
    expect(await store.getByName('www.example.com')).toEqual({ ...place, loadBalancer: www });
    expect(await store.nameTaken('www.example.com')).toBe(true);
    expect(await store.nameTaken('www.example.com', www.id)).toBe(false);
    const moved = { ...www, default_pools: [second.id], description: 'moved' };
    await store.update(mine.id, moved);
    expect(await store.get(mine.id, www.id)).toEqual(moved);
    expect(await store.delete(mine.id, www.id)).toBe(true);
    expect(await store.delete(mine.id, www.id)).toBe(false);
    expect(await store.getByName('www.example.com')).toBeUndefined();
  });

  it('answers the load balancers that name a pool, and keeps that in step with updates', async () => {
    const { first, second, mine, place } = await setUp(context);
    const store = new SqlLoadBalancerStore(context.db());
    const lb = loadBalancer('www.example.com', { default: [first.id], fallback: first.id });
    await store.insert(place, lb);
    expect((await store.listByPool(ACCOUNT, first.id)).map((x) => x.id)).toEqual([lb.id]);
    expect(await store.listByPool(ACCOUNT, second.id)).toEqual([]);
    expect(await store.listByPool(OTHER_ACCOUNT, first.id)).toEqual([]);
    await store.update(mine.id, { ...lb, default_pools: [second.id], fallback_pool: second.id });
    expect(await store.listByPool(ACCOUNT, first.id)).toEqual([]);
    expect((await store.listByPool(ACCOUNT, second.id)).map((x) => x.id)).toEqual([lb.id]);
  });

  it('refuses a hostname another load balancer has, in any zone or account (v4 error, not a 500)', async () => {
    const { first, theirs, place } = await setUp(context);
    const store = new SqlLoadBalancerStore(context.db());
    await store.insert(place, loadBalancer('www.example.com', { default: [first.id], fallback: first.id }));
    const otherPools = new SqlPoolStore(context.db());
    const foreign = pool('foreign');
    await otherPools.insert(OTHER_ACCOUNT, foreign);
    const error = await store
      .insert(
        { accountId: OTHER_ACCOUNT, zoneId: theirs.id },
        loadBalancer('www.example.com', { default: [foreign.id], fallback: foreign.id }),
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LedgeError);
    expect((error as LedgeError).status).toBe(400);
    expect(await store.list(theirs.id)).toEqual([]);
  });

  it('refuses to store a load balancer naming a pool that does not exist, and leaves nothing behind', async () => {
    const { first, mine, place } = await setUp(context);
    const store = new SqlLoadBalancerStore(context.db());
    const error = await store
      .insert(place, loadBalancer('www.example.com', { default: [first.id, 'f'.repeat(32)], fallback: first.id }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LedgeError);
    expect((error as LedgeError).status).toBe(400);
    expect(await store.list(mine.id)).toEqual([]);
    expect(await store.listByPool(ACCOUNT, first.id)).toEqual([]);
  });

  it('removes a zone’s load balancers and answers their hostnames', async () => {
    const { first, mine, place } = await setUp(context);
    const store = new SqlLoadBalancerStore(context.db());
    await store.insert(place, loadBalancer('a.example.com', { default: [first.id], fallback: first.id }));
    await store.insert(place, loadBalancer('b.example.com', { default: [first.id], fallback: first.id }));
    expect((await store.deleteZone(mine.id)).sort()).toEqual(['a.example.com', 'b.example.com']);
    expect(await store.list(mine.id)).toEqual([]);
    expect(await store.listByPool(ACCOUNT, first.id)).toEqual([]);
  });

  it('a pool deleted while a load balancer naming it is created: one of them fails, no dangling reference', async () => {
    const { first, second, place } = await setUp(context);
    const lbs = new SqlLoadBalancerStore(context.db());
    const pools = new SqlPoolStore(context.reopen());
    const [created, deleted] = await Promise.allSettled([
      lbs.insert(place, loadBalancer('race.example.com', { default: [second.id], fallback: first.id })),
      pools.delete(ACCOUNT, second.id),
    ]);
    const lbExists = (await lbs.getByName('race.example.com')) !== undefined;
    const poolExists = (await new SqlPoolStore(context.db()).get(ACCOUNT, second.id)) !== undefined;
    // Whichever committed first, the other was refused: never a load balancer naming a missing pool.
    expect(lbExists && !poolExists).toBe(false);
    expect([created, deleted].some((r) => r.status === 'fulfilled')).toBe(true);
    if (created.status === 'rejected') expect((created.reason as LedgeError).status).toBe(400);
    if (deleted.status === 'rejected') expect((deleted.reason as LedgeError).status).toBe(412);
  });

  it('two nodes creating one hostname at once: exactly one wins', async () => {
    const { first, place } = await setUp(context);
    const stores = [new SqlLoadBalancerStore(context.db()), new SqlLoadBalancerStore(context.reopen())];
    const results = await Promise.allSettled(
      stores.map((store) =>
        store.insert(place, loadBalancer('same.example.com', { default: [first.id], fallback: first.id })),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect((lost.reason as LedgeError).status).toBe(400);
  });
}
