import Cloudflare from 'cloudflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { lbClient, poolBody, type LbCall } from './helpers.ts';

let ledge: TestLedge;
let call: LbCall;
const emails = (pools: { notification_email: string }[]) => pools.map((p) => p.notification_email);
async function allPools() {
  return (await call('GET', '/pools?per_page=1000')).body.result as {
    name: string;
    notification_email: string;
    modified_on: string;
  }[];
}

beforeAll(async () => {
  ledge = await startLedge();
  call = lbClient(ledge);
  // 30 pools, each with a legacy email: more than one default page.
  for (let i = 0; i < 30; i++) {
    await call(
      'POST',
      '/pools',
      poolBody(`legacy-${String(i).padStart(2, '0')}`, { notification_email: 'ops@example.com' }),
    );
  }
});
afterAll(() => ledge.close());

describe('bulk PATCH /pools', () => {
  it('clears notification_email on the first page only (25 by name) and returns those pools', async () => {
    const res = await call('PATCH', '/pools', { notification_email: '' });
    expect(res.status).toBe(200);
    expect(res.body.result).toHaveLength(25);
    expect(res.body.result[0].name).toBe('legacy-00');
    expect(emails(res.body.result).every((e) => e === '')).toBe(true);
    expect(res.body.messages).toEqual([]);
    expect(res.body.result_info).toMatchObject({ page: 1, per_page: 25, count: 25, total_count: 30 });
    const after = await allPools();
    expect(emails(after.slice(0, 25)).every((e) => e === '')).toBe(true);
    expect(emails(after.slice(25))).toEqual(Array(5).fill('ops@example.com'));
    expect(await ledge.server.platform.loadBalancing.countPoolsWithLegacyEmail(ledge.accountId)).toBe(5);
  });

  it('applies to the requested page (page/per_page and limit/offset)', async () => {
    const res = await call('PATCH', '/pools?page=2', { notification_email: '' });
    expect(res.body.result.map((p: { name: string }) => p.name)).toEqual([
      'legacy-25',
      'legacy-26',
      'legacy-27',
      'legacy-28',
      'legacy-29',
    ]);
    expect(await ledge.server.platform.loadBalancing.countPoolsWithLegacyEmail(ledge.accountId)).toBe(0);
    const set = await call('PATCH', '/pools?limit=2&offset=3', { notification_email: 'a@example.com' });
    expect(set.body.result.map((p: { name: string }) => p.name)).toEqual(['legacy-03', 'legacy-04']);
    expect(emails(await allPools()).filter((e) => e !== '')).toEqual(['a@example.com', 'a@example.com']);
  });

  it('applies a list of valid addresses with a deprecation notice in messages', async () => {
    const res = await call('PATCH', '/pools?per_page=3', { notification_email: 'a@example.com, b@example.com' });
    expect(res.status).toBe(200);
    expect(emails(res.body.result)).toEqual(Array(3).fill('a@example.com,b@example.com'));
    expect(res.body.messages[0].message).toMatch(/deprecated/);
    await call('PATCH', '/pools?per_page=1000', { notification_email: '' });
  });

  it('returns an empty page past the end and changes nothing', async () => {
    const res = await call('PATCH', '/pools?page=5', { notification_email: 'x@example.com' });
    expect(res.status).toBe(200);
    expect(res.body.result).toEqual([]);
    expect(emails(await allPools()).every((e) => e === '')).toBe(true);
  });

  it.each([
    ['another field', { description: 'x' }],
    ['another field next to notification_email', { notification_email: '', enabled: false }],
    ['an invalid address', { notification_email: 'nope' }],
    ['a non-string value', { notification_email: null }],
    ['an empty body', {}],
    ['an array body', [{ notification_email: '' }]],
  ])('rejects %s with 400/1002 and writes nothing', async (_label, body) => {
    const before = await allPools();
    const res = await call('PATCH', '/pools', body);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].code).toBe(1002);
    expect(res.body.errors[0].message).toMatch(/validation failed$/);
    expect(await allPools()).toEqual(before);
  });

  it.each([['page=0'], ['per_page=5000'], ['limit=-1']])('rejects out-of-range paging %s', async (query) => {
    const res = await call('PATCH', `/pools?${query}`, { notification_email: '' });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].code).toBe(1002);
  });

  it('works with the official SDK (pools.bulkEdit), one page per call', async () => {
    await call('PATCH', '/pools?per_page=1000', { notification_email: 'ops@example.com' });
    const sdk = new Cloudflare({ baseURL: ledge.apiUrl, apiEmail: ledge.email, apiKey: ledge.apiKey });
    const page = await sdk.loadBalancers.pools.bulkEdit({ account_id: ledge.accountId, notification_email: '' });
    const pools = page.result;
    expect(Array.isArray(pools)).toBe(true);
    expect(pools).toHaveLength(25);
    expect(pools.every((p) => p.notification_email === '')).toBe(true);
    expect(await ledge.server.platform.loadBalancing.countPoolsWithLegacyEmail(ledge.accountId)).toBe(5);
  });
});
