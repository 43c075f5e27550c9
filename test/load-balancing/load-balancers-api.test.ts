import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { apiClient, otherTenant, type ApiCall } from '../zones/helpers.ts';
import { poolBody } from './helpers.ts';

let ledge: TestLedge;
let call: ApiCall;
let zone: { id: string; name: string };
let poolA: string;
let poolB: string;
let base: string;
const pools = () => `/accounts/${ledge.accountId}/load_balancers/pools`;

beforeAll(async () => {
  ledge = await startLedge({ flags: { functionsDomain: 'fn.example' } });
  call = apiClient(ledge);
  zone = (await call('POST', '/zones', { name: 'shop.example', account: { id: ledge.accountId } })).body.result;
  poolA = (await call('POST', pools(), poolBody('pool-a'))).body.result.id;
  poolB = (await call('POST', pools(), poolBody('pool-b'))).body.result.id;
  base = `/zones/${zone.id}/load_balancers`;
});
afterAll(() => ledge.close());

const lbBody = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  default_pools: [poolA, poolB],
  fallback_pool: poolB,
  ...extra,
});

async function expectError(method: string, path: string, body: unknown, status: number, code: number, message: RegExp) {
  const answer = await call(method, path, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body.success).toBe(false);
  expect(answer.body.errors[0].code).toBe(code);
  expect(answer.body.errors[0].message).toMatch(message);
}

describe('zone load balancers API', () => {
  it('creates a load balancer with Cloudflare defaults, normalising the hostname', async () => {
    const { status, body } = await call('POST', base, lbBody('WWW.Shop.Example.'));
    expect(status).toBe(200);
    expect(body.messages).toEqual([]);
    const lb = body.result;
    expect(lb).toMatchObject({
      name: 'www.shop.example',
      zone_name: 'shop.example',
      default_pools: [poolA, poolB],
      fallback_pool: poolB,
      enabled: true,
      proxied: false,
      ttl: 30,
      steering_policy: 'off',
      session_affinity: 'none',
      description: '',
    });
    expect(lb.id).toMatch(/^[0-9a-f]{32}$/);
    expect((await call('GET', `${base}/${lb.id}`)).body.result).toEqual(lb);
    const list = await call('GET', base);
    expect(list.body.result.map((x: { id: string }) => x.id)).toContain(lb.id);
  });

  it('stores every field of the SDK type and answers it back', async () => {
    const full = lbBody('full.shop.example', {
      description: 'all of it',
      enabled: false,
      proxied: true,
      ttl: 60,
      steering_policy: 'random',
      random_steering: { default_weight: 0.2, pool_weights: { [poolA]: 0.8 } },
      session_affinity: 'header',
      session_affinity_ttl: 600,
      session_affinity_attributes: {
        samesite: 'Strict',
        secure: 'Always',
        drain_duration: 10,
        headers: ['x-session'],
        require_all_headers: true,
        zero_downtime_failover: 'sticky',
      },
      adaptive_routing: { failover_across_pools: true },
      location_strategy: { mode: 'resolver_ip', prefer_ecs: 'always' },
      region_pools: { WNAM: [poolA] },
      pop_pools: { LAX: [poolB] },
      country_pools: { US: [poolA, poolB] },
      rules: [{ name: 'r1', condition: 'http.request.uri.path contains "/api"', overrides: { ttl: 5 } }],
      networks: ['cloudflare'],
    });
    const { status, body } = await call('POST', base, full);
    expect(status).toBe(200);
    const { id: _id, ...expected } = { ...full, id: '' };
    expect(body.result).toMatchObject(expected);
  });

  it('stores steering policies it does not apply, with a notice in messages', async () => {
    for (const policy of ['geo', 'dynamic_latency', 'proximity']) {
      const { status, body } = await call(
        'POST',
        base,
        lbBody(`${policy.replace('_', '-')}.shop.example`, { steering_policy: policy }),
      );
      expect(status).toBe(200);
      expect(body.result.steering_policy).toBe(policy);
      expect(body.messages[0].message).toMatch(/stored but not applied/);
    }
    for (const policy of ['', 'least_outstanding_requests', 'least_connections']) {
      const { body } = await call('POST', base, lbBody(`p${policy.length}.shop.example`, { steering_policy: policy }));
      expect(body.result.steering_policy).toBe(policy);
      expect(body.messages).toEqual([]);
    }
  });

  it('PUT replaces, PATCH merges, and both keep id and created_on', async () => {
    const lb = (await call('POST', base, lbBody('edit.shop.example', { description: 'first' }))).body.result;
    const patched = await call('PATCH', `${base}/${lb.id}`, { enabled: false, default_pools: [poolB] });
    expect(patched.status).toBe(200);
    expect(patched.body.result).toMatchObject({ enabled: false, default_pools: [poolB], description: 'first' });
    expect(patched.body.result.created_on).toBe(lb.created_on);
    const put = await call('PUT', `${base}/${lb.id}`, lbBody('EDIT2.shop.example'));
    expect(put.body.result).toMatchObject({ name: 'edit2.shop.example', enabled: true, description: '' });
    expect(put.body.result.id).toBe(lb.id);
    // A full GET answer sent back as a PUT body is accepted (read-only fields are ignored).
    const roundTrip = await call('PUT', `${base}/${lb.id}`, put.body.result);
    expect(roundTrip.status).toBe(200);
    expect(await ledge.server.platform.loadBalancing.directory.findByHostname('edit.shop.example')).toBeUndefined();
    expect(
      (await ledge.server.platform.loadBalancing.directory.findByHostname('Edit2.shop.example:443'))?.loadBalancer.id,
    ).toBe(lb.id);
  });

  it('deletes a load balancer, answering its id', async () => {
    const lb = (await call('POST', base, lbBody('del.shop.example'))).body.result;
    const { status, body } = await call('DELETE', `${base}/${lb.id}`);
    expect(status).toBe(200);
    expect(body.result).toEqual({ id: lb.id });
    await expectError('GET', `${base}/${lb.id}`, undefined, 404, 1001, /not found/);
    await expectError('DELETE', `${base}/${lb.id}`, undefined, 404, 1001, /not found/);
  });

  it('refuses pools that do not exist or belong to another account', async () => {
    const stranger = await otherTenant(ledge, 'pool-owner');
    const theirPool = (
      await stranger.call('POST', `/accounts/${stranger.accountId}/load_balancers/pools`, poolBody('theirs'))
    ).body.result.id;
    await expectError(
      'POST',
      base,
      lbBody('x.shop.example', { default_pools: [poolA, theirPool] }),
      400,
      1002,
      /default_pools.1: no pool with id/,
    );
    await expectError(
      'POST',
      base,
      lbBody('x.shop.example', { fallback_pool: 'f'.repeat(32) }),
      400,
      1002,
      /fallback_pool: no pool/,
    );
    await expectError(
      'POST',
      base,
      lbBody('x.shop.example', { country_pools: { US: [theirPool] } }),
      400,
      1002,
      /country_pools.US.0: no pool/,
    );
  });

  it.each([
    [{ name: 'other.example' }, /not in the zone shop.example/],
    [{ name: 'bad_name.shop.example' }, /not a valid hostname/],
    [{ name: `${'a'.repeat(64)}.shop.example` }, /not a valid hostname/],
    [{ name: 42 }, /name/],
    [{ default_pools: [] }, /at least one pool/],
    [{ default_pools: 'x' }, /default_pools/],
    [{ fallback_pool: undefined }, /fallback_pool/],
    [{ steering_policy: 'round_robin' }, /steering_policy/],
    [{ session_affinity: 'sticky' }, /session_affinity/],
    [{ session_affinity: 'header' }, /at least one header/],
    [{ session_affinity: 'cookie', session_affinity_ttl: 60 }, /1800/],
    [{ ttl: -1 }, /ttl/],
    [{ ttl: 'soon' }, /ttl/],
    [{ enabled: 'yes' }, /enabled/],
    [{ random_steering: { pool_weights: { abc: 2 } } }, /random_steering/],
    [{ surprise: true }, /surprise/],
  ])('refuses %j with a 1002', async (change, why) => {
    await expectError('POST', base, { ...lbBody('bad.shop.example'), ...change }, 400, 1002, why);
  });

  it('refuses malformed JSON and a body that is not an object', async () => {
    await expectError('POST', base, '{', 400, 1002, /Malformed JSON/);
    const lb = (await call('POST', base, lbBody('json.shop.example'))).body.result;
    await expectError('PATCH', `${base}/${lb.id}`, [1], 400, 1002, /JSON object/);
  });

  it('refuses a hostname another load balancer uses', async () => {
    await call('POST', base, lbBody('dup.shop.example'));
    await expectError('POST', base, lbBody('DUP.shop.example'), 400, 1003, /already exists/);
    const other = (await call('POST', base, lbBody('dup2.shop.example'))).body.result;
    await expectError('PATCH', `${base}/${other.id}`, { name: 'dup.shop.example' }, 400, 1003, /already exists/);
  });

  it("refuses Ledge's own hostnames (a loop)", async () => {
    const own = (await call('POST', '/zones', { name: 'fn.example', account: { id: ledge.accountId } })).body.result;
    const ownBase = `/zones/${own.id}/load_balancers`;
    await expectError('POST', ownBase, lbBody('fn.example'), 400, 1002, /Ledge's own hostnames/);
    await expectError('POST', ownBase, lbBody('my-script.me.fn.example'), 400, 1002, /Ledge's own hostnames/);
    const local = (await call('POST', '/zones', { name: 'app.localhost', account: { id: ledge.accountId } })).body
      .result;
    await expectError(
      'POST',
      `/zones/${local.id}/load_balancers`,
      lbBody('app.localhost'),
      400,
      1002,
      /loop|route requests back/,
    );
  });

  it('keeps hostnames of a more specific zone to that zone, and zones under a foreign zone out', async () => {
    const stranger = await otherTenant(ledge, 'sub-zone-owner');
    // Another account may not take a zone under this account's zone...
    const under = await stranger.call('POST', '/zones', {
      name: 'eu.shop.example',
      account: { id: stranger.accountId },
    });
    expect(under.status).toBe(400);
    expect(under.body.errors[0]).toMatchObject({ code: 1049 });
    expect(under.body.errors[0].message).toMatch(/under the zone shop.example of another account/);
    // ...and a hostname inside a nested zone of the same account belongs to the nested zone.
    const nested = (await call('POST', '/zones', { name: 'us.shop.example', account: { id: ledge.accountId } })).body
      .result;
    await expectError('POST', base, lbBody('api.us.shop.example'), 400, 1002, /is in the zone us.shop.example/);
    const inNested = await call('POST', `/zones/${nested.id}/load_balancers`, lbBody('api.us.shop.example'));
    expect(inNested.status).toBe(200);
  });

  it("answers a foreign or unknown zone's load balancers as an unknown zone", async () => {
    const stranger = await otherTenant(ledge, 'zone-owner');
    const theirs = (
      await stranger.call('POST', '/zones', { name: 'their-shop.example', account: { id: stranger.accountId } })
    ).body.result;
    for (const zoneId of [theirs.id, 'f'.repeat(32)]) {
      await expectError('GET', `/zones/${zoneId}/load_balancers`, undefined, 404, 1003, /zone id/);
      await expectError(
        'POST',
        `/zones/${zoneId}/load_balancers`,
        lbBody('x.their-shop.example'),
        404,
        1003,
        /zone id/,
      );
    }
  });

  it('lists the load balancers using a pool as its references and refuses to delete it (1005)', async () => {
    const used = (await call('POST', pools(), poolBody('used-pool'))).body.result.id;
    const lb = (await call('POST', base, lbBody('refs.shop.example', { default_pools: [used], fallback_pool: used })))
      .body.result;
    const refs = await call('GET', `${pools()}/${used}/references`);
    expect(refs.body.result).toEqual([
      {
        reference_type: 'referrer',
        resource_id: lb.id,
        resource_name: 'refs.shop.example',
        resource_type: 'load_balancer',
      },
    ]);
    await expectError('DELETE', `${pools()}/${used}`, undefined, 412, 1005, /load_balancer refs.shop.example/);
    await call('PATCH', `${base}/${lb.id}`, { default_pools: [poolA], fallback_pool: poolA });
    expect((await call('GET', `${pools()}/${used}/references`)).body.result).toEqual([]);
    expect((await call('DELETE', `${pools()}/${used}`)).status).toBe(200);
  });

  it('deletes the load balancers of a deleted zone, and tells the directory', async () => {
    const directory = ledge.server.platform.loadBalancing.directory;
    const temp = (await call('POST', '/zones', { name: 'temp.example', account: { id: ledge.accountId } })).body.result;
    await call('POST', `/zones/${temp.id}/load_balancers`, lbBody('temp.example'));
    expect(await directory.findByHostname('temp.example')).toBeDefined();
    const changes: string[][] = [];
    const stop = directory.onChange((change) => changes.push(change.hostnames));
    const before = directory.version;
    expect((await call('DELETE', `/zones/${temp.id}`)).status).toBe(200);
    stop();
    expect(directory.version).toBeGreaterThan(before);
    expect(changes).toContainEqual(['temp.example']);
    expect(await directory.findByHostname('temp.example')).toBeUndefined();
    const again = (await call('POST', '/zones', { name: 'temp.example', account: { id: ledge.accountId } })).body
      .result;
    expect((await call('GET', `/zones/${again.id}/load_balancers`)).body.result).toEqual([]);
  });
});
