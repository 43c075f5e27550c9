import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { api, tenant, uploadScript } from '../workers/helpers.ts';

const MAX_NAMESPACES = 3;

/** The v4 KV API: namespaces and paging, values, limits and Cloudflare's codes, and one account apart from another. */
describe('the Workers KV API', () => {
  let ledge: TestLedge;
  let other: TestLedge;
  let namespaceId: string;
  const base = (who: TestLedge = ledge) => `/accounts/${who.accountId}/storage/kv/namespaces`;
  const raw = (path: string, init: RequestInit = {}, who: TestLedge = ledge) =>
    fetch(`${ledge.apiUrl}${path}`, { ...init, headers: { ...who.tokenHeaders, ...init.headers } });
  const errorCode = async (response: Response) =>
    ((await response.json()) as { errors: { code: number }[] }).errors[0]?.code;

  beforeAll(async () => {
    ledge = await startLedge({ env: { LEDGE_MAX_KV_NAMESPACES_PER_ACCOUNT: String(MAX_NAMESPACES) } });
    other = await tenant(ledge, 'Other');
    namespaceId = (await api(ledge, 'POST', base(), { title: 'main' })).body.result.id as string;
  });
  afterAll(async () => ledge?.close());

  it('lists namespaces in pages, by title, and enforces the per-account limit with 10018', async () => {
    await api(ledge, 'POST', base(), { title: 'b-second' });
    await api(ledge, 'POST', base(), { title: 'a-third' });
    const fourth = await api(ledge, 'POST', base(), { title: 'fourth' });
    expect(fourth.status).toBe(400);
    expect(fourth.body.errors[0]!.code).toBe(10018);
    const page = await api(ledge, 'GET', `${base()}?per_page=5&page=1&order=title&direction=asc`);
    expect((page.body.result as { title: string }[]).map((n) => n.title)).toEqual(['a-third', 'b-second', 'main']);
    expect(page.body.result_info).toMatchObject({ page: 1, per_page: 5, count: 3, total_count: 3 });
    const past = await api(ledge, 'GET', `${base()}?per_page=5&page=2`);
    expect(past.body.result).toEqual([]);
  });

  it('refuses bad input with the right status and code, never a 500', async () => {
    expect((await api(ledge, 'POST', base(), { title: '' })).body.errors[0]!.code).toBe(10019);
    expect((await api(ledge, 'POST', base(), { title: 'main' })).body.errors[0]!.code).toBe(10014);
    expect((await api(ledge, 'GET', `${base()}/not-an-id`)).body.errors[0]!.code).toBe(10011);
    expect((await api(ledge, 'GET', `${base()}/${'f'.repeat(32)}`)).status).toBe(404);
    const value = (key: string) => `${base()}/${namespaceId}/values/${encodeURIComponent(key)}`;
    const missing = await raw(value('nothing-here'));
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe(10009);
    const longKey = await raw(value('k'.repeat(513)), { method: 'PUT', body: 'v' });
    expect(longKey.status).toBe(414);
    const bigMeta = new FormData();
    bigMeta.set('value', 'v');
    bigMeta.set('metadata', JSON.stringify({ pad: 'x'.repeat(1100) }));
    const meta = await raw(value('m'), { method: 'PUT', body: bigMeta });
    expect(meta.status).toBe(413);
    expect(await errorCode(meta)).toBe(10024);
    const notJson = new FormData();
    notJson.set('value', 'v');
    notJson.set('metadata', '{nope');
    expect((await raw(value('m'), { method: 'PUT', body: notJson })).status).toBe(400);
    const soon = await raw(`${value('m')}?expiration_ttl=5`, { method: 'PUT', body: 'v' });
    expect(soon.status).toBe(400);
    expect(((await soon.json()) as { errors: { message: string }[] }).errors[0]!.message).toContain('at least 60');
    const huge = await raw(value('huge'), { method: 'PUT', body: new Uint8Array(25 * 1024 * 1024 + 1) });
    expect(huge.status).toBe(413);
    expect((await raw(`${base()}/${namespaceId}/keys?limit=5`)).status).toBe(400);
    expect((await raw(`${base()}/${namespaceId}/bulk`, { method: 'PUT', body: '{"not":"an array"}' })).status).toBe(
      400,
    );
    // Nothing of the refused writes was stored.
    const keys = await api(ledge, 'GET', `${base()}/${namespaceId}/keys`);
    expect(keys.body.result).toEqual([]);
  });

  it('puts with metadata as multipart, reads metadata, bulk-gets, and pages keys', async () => {
    const form = new FormData();
    form.set('value', 'hello');
    form.set('metadata', '{"a":1}');
    expect((await raw(`${base()}/${namespaceId}/values/greet`, { method: 'PUT', body: form })).status).toBe(200);
    expect((await api(ledge, 'GET', `${base()}/${namespaceId}/metadata/greet`)).body.result).toEqual({ a: 1 });
    const bulk = await api(ledge, 'PUT', `${base()}/${namespaceId}/bulk`, [
      { key: 'k1', value: 'v1' },
      { key: 'k2', value: '{"j":true}', expiration_ttl: 3600 },
    ]);
    expect(bulk.body.result).toEqual({ successful_key_count: 2, unsuccessful_keys: [] });
    const got = await api(ledge, 'POST', `${base()}/${namespaceId}/bulk/get`, { keys: ['k1', 'k2', 'none'] });
    expect(got.body.result).toEqual({ values: { k1: 'v1', k2: '{"j":true}', none: null } });
    const first = await api(ledge, 'GET', `${base()}/${namespaceId}/keys?limit=10&prefix=k`);
    expect((first.body.result as { name: string }[]).map((k) => k.name)).toEqual(['k1', 'k2']);
    expect(first.body.result_info).toMatchObject({ count: 2, cursor: '' });
    const deleted = await api(ledge, 'POST', `${base()}/${namespaceId}/bulk/delete`, ['k1', 'k2']);
    expect(deleted.body.result).toMatchObject({ successful_key_count: 2 });
  });

  it("keeps another account out of a namespace: its API, its uploads' bindings", async () => {
    // Account B naming A's namespace under its own account: not found, nothing read.
    expect((await api(other, 'GET', `${base(other)}/${namespaceId}`)).status).toBe(404);
    const read = await raw(`${base(other)}/${namespaceId}/values/greet`, {}, other);
    expect(read.status).toBe(404);
    expect(await errorCode(read)).toBe(10013);
    // ... nor under A's account.
    expect((await raw(`${base()}/${namespaceId}/values/greet`, {}, other)).status).toBe(403);
    // A binding to A's namespace in B's upload is refused at deploy (10041).
    const upload = await uploadScript(other, 'thief', {
      metadata: { bindings: [{ type: 'kv_namespace', name: 'KV', namespace_id: namespaceId }] },
    });
    expect(upload.status).toBe(400);
    expect(upload.body.errors[0]!.code).toBe(10041);
  });

  it('renames and deletes a namespace', async () => {
    const renamed = await api(ledge, 'PUT', `${base()}/${namespaceId}`, { title: 'renamed' });
    expect(renamed.body.result).toMatchObject({ id: namespaceId, title: 'renamed' });
    expect((await api(ledge, 'DELETE', `${base()}/${namespaceId}`)).status).toBe(200);
    expect((await api(ledge, 'GET', `${base()}/${namespaceId}/keys`)).body.errors[0]!.code).toBe(10013);
  });
});
