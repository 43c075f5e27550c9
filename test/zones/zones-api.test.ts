import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { apiClient, otherTenant, type ApiCall } from './helpers.ts';

let ledge: TestLedge;
let call: ApiCall;
beforeAll(async () => {
  ledge = await startLedge();
  call = apiClient(ledge);
});
afterAll(() => ledge.close());

const create = (name: string, accountId = ledge.accountId) =>
  call('POST', '/zones', { name, account: { id: accountId } });

describe('zones API', () => {
  it('creates an active full zone owned by the account, with Cloudflare fields', async () => {
    const { status, body } = await create('Example.COM');
    expect(status).toBe(200);
    const zone = body.result;
    expect(zone).toMatchObject({
      name: 'example.com',
      status: 'active',
      type: 'full',
      paused: false,
      name_servers: [],
      account: { id: ledge.accountId },
    });
    expect(zone.id).toMatch(/^[0-9a-f]{32}$/);
    expect(Date.parse(zone.created_on)).not.toBeNaN();
    expect((await call('GET', `/zones/${zone.id}`)).body.result).toEqual(zone);
  });

  it('refuses a duplicate name with 1061, whatever its case or trailing dot', async () => {
    await create('dup.example');
    const { status, body } = await create('DUP.example.');
    expect(status).toBe(400);
    expect(body.errors[0]).toMatchObject({ code: 1061, message: 'dup.example already exists.' });
  });

  it.each([
    ['localhost', /two labels/],
    ['-bad.example', /labels/],
    ['a..example', /labels/],
    ['under_score.example', /labels/],
    ['10.0.0.1', /IP address/],
    [`${'a'.repeat(64)}.example`, /labels/],
    [`${'abcdefghi.'.repeat(26)}com`, /253/],
    ['', /empty/],
  ])('refuses the invalid name %j with 1049', async (name, why) => {
    const { status, body } = await create(name);
    expect(status).toBe(400);
    expect(body.errors[0].code).toBe(1049);
    expect(body.errors[0].message).toMatch(why);
  });

  it.each([
    [{ account: { id: TEST_ACCOUNT } }, /name/],
    [{ name: 'x.example' }, /account/],
    [{ name: 'x.example', account: { id: TEST_ACCOUNT }, type: 'partial' }, /full/],
    [{ name: 42, account: { id: TEST_ACCOUNT } }, /name/],
    [{ name: 'x.example', account: { id: TEST_ACCOUNT }, extra: 1 }, /extra/],
    ['[', /Malformed JSON/],
  ])('refuses the body %j with 400', async (input, why) => {
    const { status, body } = await call('POST', '/zones', input);
    expect(status).toBe(400);
    expect(body.success).toBe(false);
    expect(body.errors[0].code).toBe(1001);
    expect(body.errors[0].message).toMatch(why);
  });

  it('lists zones with filters and Cloudflare pagination', async () => {
    for (const name of ['list-a.test', 'list-b.test', 'list-c.test', 'other-zone.test']) await create(name);
    const exact = await call('GET', '/zones?name=list-b.test');
    expect(exact.body.result.map((z: { name: string }) => z.name)).toEqual(['list-b.test']);
    const prefix = await call('GET', '/zones?name=starts_with:list-&per_page=5&direction=desc');
    expect(prefix.body.result.map((z: { name: string }) => z.name)).toEqual([
      'list-c.test',
      'list-b.test',
      'list-a.test',
    ]);
    expect(prefix.body.result_info).toMatchObject({ page: 1, per_page: 5, count: 3, total_count: 3, total_pages: 1 });
    const byAccount = await call('GET', `/zones?account.id=${ledge.accountId}&status=active&per_page=5&page=2`);
    expect(byAccount.status).toBe(200);
    expect(byAccount.body.result_info.page).toBe(2);
    expect((await call('GET', '/zones?per_page=51')).status).toBe(400);
    expect((await call('GET', '/zones?status=gone')).status).toBe(400);
    expect((await call('GET', '/zones?order=size')).status).toBe(400);
  });

  it('hides the zones of accounts the caller is not a member of', async () => {
    const stranger = await otherTenant(ledge, 'stranger');
    const theirs = (
      await stranger.call('POST', '/zones', { name: 'theirs.example', account: { id: stranger.accountId } })
    ).body.result;
    expect(theirs.account.id).toBe(stranger.accountId);
    const get = await call('GET', `/zones/${theirs.id}`);
    expect(get.status).toBe(404);
    expect(get.body.errors[0]).toEqual({ code: 1003, message: 'Invalid or missing zone id.' });
    expect((await call('GET', `/zones/${'f'.repeat(32)}`)).body).toEqual(get.body);
    expect((await call('DELETE', `/zones/${theirs.id}`)).status).toBe(404);
    expect((await call('GET', '/zones?name=theirs.example')).body.result).toEqual([]);
    // Creating in an account the caller is not a member of looks like any unknown account.
    const foreign = await create('sneaky.example', stranger.accountId);
    expect(foreign.status).toBe(403);
    expect(foreign.body.errors[0].code).toBe(9109);
    // Still one name per platform: a hostname routes to one place.
    expect((await create('theirs.example')).body.errors[0].code).toBe(1061);
  });

  it('deletes a zone, answering its id', async () => {
    const zone = (await create('gone.example')).body.result;
    const { status, body } = await call('DELETE', `/zones/${zone.id}`);
    expect(status).toBe(200);
    expect(body.result).toEqual({ id: zone.id });
    expect((await call('GET', `/zones/${zone.id}`)).status).toBe(404);
    expect((await create('gone.example')).status).toBe(200);
  });
});

const TEST_ACCOUNT = '0123456789abcdef0123456789abcdef';
