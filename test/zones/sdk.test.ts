import Cloudflare from 'cloudflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';

/** Issue 16, point 1 and 2: the official SDK drives zones and zone load balancers unchanged. */
let ledge: TestLedge;
let sdk: Cloudflare;
beforeAll(async () => {
  ledge = await startLedge();
  sdk = new Cloudflare({ baseURL: ledge.apiUrl, apiToken: ledge.apiToken, maxRetries: 0 });
});
afterAll(() => ledge.close());

describe('the official SDK', () => {
  it('creates, lists, gets and deletes zones', async () => {
    const zone = await sdk.zones.create({ account: { id: ledge.accountId }, name: 'sdk-zone.example', type: 'full' });
    expect(zone).toMatchObject({ name: 'sdk-zone.example', status: 'active', account: { id: ledge.accountId } });
    for (let i = 0; i < 6; i++) await sdk.zones.create({ account: { id: ledge.accountId }, name: `page-${i}.example` });
    // Auto-pagination walks every page (5 per page) and stops after the last.
    const names: string[] = [];
    for await (const z of sdk.zones.list({ account: { id: ledge.accountId }, per_page: 5 })) names.push(z.name);
    expect(names).toHaveLength(7);
    expect(names).toContain('sdk-zone.example');
    const byName = await sdk.zones.list({ name: 'sdk-zone.example' });
    expect(byName.result.map((z) => z.id)).toEqual([zone.id]);
    expect((await sdk.zones.get({ zone_id: zone.id })).name).toBe('sdk-zone.example');
    expect(await sdk.zones.delete({ zone_id: zone.id })).toEqual({ id: zone.id });
    const error = await sdk.zones.get({ zone_id: zone.id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Cloudflare.NotFoundError);
    const duplicate = await sdk.zones
      .create({ account: { id: ledge.accountId }, name: 'page-0.example' })
      .catch((e: unknown) => e);
    expect(duplicate).toBeInstanceOf(Cloudflare.BadRequestError);
    expect((duplicate as InstanceType<typeof Cloudflare.BadRequestError>).errors[0]?.code).toBe(1061);
  });

  it('creates, lists, gets, updates, edits and deletes load balancers', async () => {
    const zone = await sdk.zones.create({ account: { id: ledge.accountId }, name: 'sdk-lb.example' });
    const pool = await sdk.loadBalancers.pools.create({
      account_id: ledge.accountId,
      name: 'sdk-lb-pool',
      origins: [{ name: 'o1', address: '192.0.2.1' }],
    });
    const backup = await sdk.loadBalancers.pools.create({
      account_id: ledge.accountId,
      name: 'sdk-lb-backup',
      origins: [{ name: 'o1', address: '192.0.2.2' }],
    });
    const lb = await sdk.loadBalancers.create({
      zone_id: zone.id,
      name: 'www.sdk-lb.example',
      default_pools: [pool.id!, backup.id!],
      fallback_pool: backup.id!,
      steering_policy: 'least_outstanding_requests',
      session_affinity: 'cookie',
      session_affinity_ttl: 1800,
    });
    expect(lb).toMatchObject({ name: 'www.sdk-lb.example', zone_name: 'sdk-lb.example', enabled: true, ttl: 30 });
    const list = await sdk.loadBalancers.list({ zone_id: zone.id });
    expect(list.result.map((x) => x.id)).toEqual([lb.id]);
    expect((await sdk.loadBalancers.get(lb.id!, { zone_id: zone.id })).default_pools).toEqual([pool.id, backup.id]);
    const updated = await sdk.loadBalancers.update(lb.id!, {
      zone_id: zone.id,
      name: 'www.sdk-lb.example',
      default_pools: [backup.id!],
      fallback_pool: backup.id!,
    });
    expect(updated).toMatchObject({ default_pools: [backup.id], steering_policy: 'off', session_affinity: 'none' });
    const edited = await sdk.loadBalancers.edit(lb.id!, { zone_id: zone.id, enabled: false, description: 'paused' });
    expect(edited).toMatchObject({ enabled: false, description: 'paused', default_pools: [backup.id] });
    const refs = await sdk.loadBalancers.pools.references.get(backup.id!, { account_id: ledge.accountId });
    expect(refs.result).toContainEqual(expect.objectContaining({ resource_type: 'load_balancer', resource_id: lb.id }));
    const refused = await sdk.loadBalancers.pools
      .delete(backup.id!, { account_id: ledge.accountId })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Cloudflare.APIError);
    expect(await sdk.loadBalancers.delete(lb.id!, { zone_id: zone.id })).toEqual({ id: lb.id });
    expect((await sdk.loadBalancers.list({ zone_id: zone.id })).result).toEqual([]);
    await sdk.loadBalancers.pools.delete(backup.id!, { account_id: ledge.accountId });
  });
});
