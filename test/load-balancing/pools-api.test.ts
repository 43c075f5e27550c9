import Cloudflare from 'cloudflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { lbClient, poolBody, type LbCall } from './helpers.ts';

let ledge: TestLedge;
let call: LbCall;
beforeAll(async () => {
  ledge = await startLedge();
  call = lbClient(ledge);
});
afterAll(() => ledge.close());

describe('pools API', () => {
  it('creates a pool with every default of the reference', async () => {
    const { status, body } = await call('POST', '/pools', poolBody('defaults-pool'));
    expect(status).toBe(200);
    const pool = body.result;
    expect(pool.id).toMatch(/^[0-9a-f]{32}$/);
    expect(pool).toMatchObject({
      name: 'defaults-pool',
      description: '',
      enabled: true,
      minimum_origins: 1,
      notification_email: '',
      notification_filter: null,
      check_regions: null,
      load_shedding: null,
      origin_steering: null,
      origins: [{ name: 'o1', address: '192.0.2.10', enabled: true, weight: 1, port: 0 }],
    });
    expect(pool.monitor).toBeUndefined();
    expect(Date.parse(pool.created_on)).not.toBeNaN();
    expect(pool.modified_on).toBe(pool.created_on);
  });

  it('stores every optional field and returns it on GET', async () => {
    const monitor = (await call('POST', '/monitors', {})).body.result;
    const full = {
      name: 'full_pool-1',
      description: 'web tier',
      enabled: true,
      minimum_origins: 2,
      monitor: monitor.id,
      origins: [
        {
          name: 'a',
          address: '2001:db8::1',
          weight: 0.5,
          header: { Host: ['example.com'] },
          port: 8080,
          virtual_network_id: 'vnet-1',
        },
        { name: 'b', address: 'origin.example.com', enabled: false, weight: 0 },
      ],
      notification_email: 'ops@example.com, oncall@example.com',
      notification_filter: { origin: { disable: false, healthy: null }, pool: null },
      check_regions: ['WEU', 'ENAM'],
      latitude: 52.37,
      longitude: 4.89,
      load_shedding: { default_percent: 10, default_policy: 'hash', session_percent: 5, session_policy: 'hash' },
      origin_steering: { policy: 'least_connections' },
      networks: ['n1'],
    };
    const created = (await call('POST', '/pools', full)).body.result;
    const fetched = (await call('GET', `/pools/${created.id}`)).body.result;
    expect(fetched).toEqual(created);
    expect(fetched).toMatchObject({
      ...full,
      notification_email: 'ops@example.com,oncall@example.com',
      origins: expect.any(Array),
    });
    expect(fetched.origins[1].disabled_at).toBeDefined();
    expect(fetched.origins[0]).toMatchObject(full.origins[0]!);
  });

  it('replaces with PUT (omitted fields back to defaults) and merges with PATCH', async () => {
    const pool = (await call('POST', '/pools', poolBody('put-me', { description: 'x', minimum_origins: 1 }))).body
      .result;
    const put = await call('PUT', `/pools/${pool.id}`, {
      name: 'put-me',
      origins: [{ name: 'z', address: '192.0.2.1' }],
    });
    expect(put.status).toBe(200);
    expect(put.body.result).toMatchObject({
      id: pool.id,
      description: '',
      created_on: pool.created_on,
      origins: [{ name: 'z' }],
    });
    const patched = await call('PATCH', `/pools/${pool.id}`, { description: 'patched', enabled: false });
    expect(patched.body.result).toMatchObject({ description: 'patched', enabled: false, origins: [{ name: 'z' }] });
    expect(patched.body.result.disabled_at).toBeDefined();
    // A GET result can be sent back as is (read-only fields are ignored).
    const roundTrip = await call('PUT', `/pools/${pool.id}`, patched.body.result);
    expect(roundTrip.status).toBe(200);
    expect(roundTrip.body.result.disabled_at).toBe(patched.body.result.disabled_at);
  });

  it('deletes a pool and answers 404 afterwards', async () => {
    const pool = (await call('POST', '/pools', poolBody('short-lived'))).body.result;
    const del = await call('DELETE', `/pools/${pool.id}`);
    expect(del).toMatchObject({ status: 200, body: { success: true, result: { id: pool.id } } });
    const again = await call('GET', `/pools/${pool.id}`);
    expect(again.status).toBe(404);
    expect(again.body.success).toBe(false);
  });

  it('lists references: the monitor a pool uses is a referral', async () => {
    const monitor = (await call('POST', '/monitors', { description: 'ref' })).body.result;
    const pool = (await call('POST', '/pools', poolBody('with-ref', { monitor: monitor.id }))).body.result;
    const refs = await call('GET', `/pools/${pool.id}/references`);
    expect(refs.body.result).toEqual([
      { reference_type: 'referral', resource_id: monitor.id, resource_name: monitor.id, resource_type: 'monitor' },
    ]);
    const plain = (await call('POST', '/pools', poolBody('without-ref'))).body.result;
    expect((await call('GET', `/pools/${plain.id}/references`)).body.result).toEqual([]);
  });

  it('refuses to delete a pool another subsystem still refers to: 412, code 1005', async () => {
    const pool = (await call('POST', '/pools', poolBody('referenced-pool'))).body.result;
    ledge.server.platform.loadBalancing.pools.addReferenceSource((_account, poolId) =>
      poolId === pool.id
        ? [
            {
              reference_type: 'referrer',
              resource_id: 'p1',
              resource_name: 'alert policy',
              resource_type: 'notification_policy',
            },
          ]
        : [],
    );
    const del = await call('DELETE', `/pools/${pool.id}`);
    expect(del.status).toBe(412);
    expect(del.body.errors[0].code).toBe(1005);
    expect((await call('GET', `/pools/${pool.id}`)).status).toBe(200);
  });
});

describe('pool list', () => {
  let other: TestLedge;
  let listCall: LbCall;
  beforeAll(async () => {
    other = await startLedge();
    listCall = lbClient(other);
    const names = Array.from({ length: 30 }, (_, i) => `pool-${String(29 - i).padStart(2, '0')}`);
    for (const name of names) await listCall('POST', '/pools', poolBody(name));
  });
  afterAll(() => other.close());

  it('orders by name, pages 25 by default, and reports result_info', async () => {
    const { body } = await listCall('GET', '/pools');
    expect(body.result).toHaveLength(25);
    expect(body.result[0].name).toBe('pool-00');
    expect(body.result[24].name).toBe('pool-24');
    expect(body.result_info).toEqual({ page: 1, per_page: 25, count: 25, total_count: 30, total_pages: 2 });
    const second = await listCall('GET', '/pools?page=2');
    expect(second.body.result.map((p: { name: string }) => p.name)).toEqual([
      'pool-25',
      'pool-26',
      'pool-27',
      'pool-28',
      'pool-29',
    ]);
  });

  it('pages with per_page, with limit/offset, and returns an empty page past the end', async () => {
    const perPage = await listCall('GET', '/pools?per_page=7&page=2');
    expect(perPage.body.result.map((p: { name: string }) => p.name)[0]).toBe('pool-07');
    expect(perPage.body.result_info).toMatchObject({ page: 2, per_page: 7, count: 7, total_count: 30, total_pages: 5 });
    const offset = await listCall('GET', '/pools?limit=3&offset=10');
    expect(offset.body.result.map((p: { name: string }) => p.name)).toEqual(['pool-10', 'pool-11', 'pool-12']);
    const past = await listCall('GET', '/pools?page=9');
    expect(past.status).toBe(200);
    expect(past.body.result).toEqual([]);
    expect(past.body.result_info.count).toBe(0);
  });

  it('filters by monitor', async () => {
    const monitor = (await listCall('POST', '/monitors', {})).body.result;
    await listCall('POST', '/pools', poolBody('zz-monitored', { monitor: monitor.id }));
    const { body } = await listCall('GET', `/pools?monitor=${monitor.id}`);
    expect(body.result.map((p: { name: string }) => p.name)).toEqual(['zz-monitored']);
    expect(body.result_info.total_count).toBe(1);
  });

  it('works with the official SDK (pools.list)', async () => {
    const sdk = new Cloudflare({ baseURL: other.apiUrl, apiToken: other.apiToken });
    const page = await sdk.loadBalancers.pools.list({ account_id: other.accountId });
    expect(page.result.length).toBe(25);
    expect(page.result[0]?.name).toBe('pool-00');
    expect(page.result[0]).toHaveProperty('notification_email', '');
  });
});
