import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';

interface BucketJson {
  name: string;
  creation_date: string;
  storage_class: string;
}
interface Envelope {
  success: boolean;
  result: BucketJson & { buckets: BucketJson[] };
  errors: { code: number; message: string }[];
  result_info?: { cursor?: string };
}

let ledge: TestLedge;
beforeAll(async () => {
  ledge = await startLedge();
});
afterAll(async () => ledge?.close());

async function api(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets${path}`, {
    method,
    headers: { ...ledge.tokenHeaders, ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as Envelope };
}

describe('bucket control plane', () => {
  it('creates a bucket from a text/plain JSON body, as wrangler sends it', async () => {
    const { status, body } = await api('POST', '', JSON.stringify({ name: 'photos' }), {
      'content-type': 'text/plain',
    });
    expect(status).toBe(200);
    expect(body.result).toMatchObject({
      name: 'photos',
      location: 'enam',
      storage_class: 'Standard',
      jurisdiction: 'default',
    });
    expect(Date.parse(body.result.creation_date)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('refuses a duplicate with 409/10004', async () => {
    await api('POST', '', JSON.stringify({ name: 'dup-bucket' }));
    const { status, body } = await api('POST', '', JSON.stringify({ name: 'dup-bucket' }));
    expect(status).toBe(409);
    expect(body.errors[0]!.code).toBe(10004);
  });

  it.each(['ab', 'UPPER', '-leading', 'trailing-', 'under_score', 'a'.repeat(64), 'dots.in.name', ''])(
    'refuses the invalid bucket name %j with 400/10005 and creates nothing',
    async (name) => {
      const { status, body } = await api('POST', '', JSON.stringify({ name }));
      expect(status).toBe(400);
      expect(body.errors[0]!.code).toBe(10005);
      const list = await api('GET', '?per_page=1000');
      expect(list.body.result.buckets.map((b) => b.name)).not.toContain(name);
    },
  );

  it('gets a bucket, and answers 404/10006 for a missing one', async () => {
    expect((await api('GET', '/photos')).body.result.name).toBe('photos');
    const missing = await api('GET', '/nope-nope');
    expect(missing.status).toBe(404);
    expect(missing.body.errors[0]!.code).toBe(10006);
  });

  it('lists with per_page, cursor, start_after, name_contains and direction', async () => {
    for (const name of ['list-a', 'list-b', 'list-c', 'list-d', 'list-e'])
      await api('POST', '', JSON.stringify({ name }));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api('GET', `?name_contains=list-&per_page=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.body.result.buckets.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.result.buckets.map((b) => b.name));
      cursor = page.body.result_info?.cursor;
    } while (cursor);
    expect(seen).toEqual(['list-a', 'list-b', 'list-c', 'list-d', 'list-e']);
    const after = await api('GET', '?name_contains=list-&start_after=list-c');
    expect(after.body.result.buckets.map((b) => b.name)).toEqual(['list-d', 'list-e']);
    const desc = await api('GET', '?name_contains=list-&direction=desc&per_page=2');
    expect(desc.body.result.buckets.map((b) => b.name)).toEqual(['list-e', 'list-d']);
  });

  it.each(['0', '1001', 'x', '-1'])('refuses per_page=%s with 400', async (perPage) => {
    const { status, body } = await api('GET', `?per_page=${perPage}`);
    expect(status).toBe(400);
    expect(body.errors[0]!.message).toMatch(/per_page/);
  });

  it('patches the default storage class', async () => {
    await api('POST', '', JSON.stringify({ name: 'patch-me' }));
    const { body } = await api('PATCH', '/patch-me', undefined, { 'cf-r2-storage-class': 'InfrequentAccess' });
    expect(body.result.storage_class).toBe('InfrequentAccess');
    expect((await api('GET', '/patch-me')).body.result.storage_class).toBe('InfrequentAccess');
  });

  it('deletes only empty buckets: 409/10008, then 404/10006 once gone', async () => {
    await api('POST', '', JSON.stringify({ name: 'full-bucket' }));
    const put = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets/full-bucket/objects/k`, {
      method: 'PUT',
      headers: ledge.tokenHeaders,
      body: 'x',
    });
    expect(put.status).toBe(200);
    const refused = await api('DELETE', '/full-bucket');
    expect(refused.status).toBe(409);
    expect(refused.body.errors[0]!.code).toBe(10008);
    await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets/full-bucket/objects/k`, {
      method: 'DELETE',
      headers: ledge.tokenHeaders,
    });
    expect((await api('DELETE', '/full-bucket')).status).toBe(200);
    expect((await api('DELETE', '/full-bucket')).body.errors[0]!.code).toBe(10006);
  });

  it('scopes names per account: another account can use the same name', async () => {
    const platform = ledge.server.platform;
    const other = await platform.accounts.createAccount({ name: 'other' });
    await platform.storage.buckets.create(other.id, { name: 'photos' });
    expect((await platform.storage.getBucket(other.id, 'photos'))?.accountId).toBe(other.id);
    expect((await platform.storage.getBucket(ledge.accountId, 'photos'))?.accountId).toBe(ledge.accountId);
    const mine = await api('GET', '?per_page=1000');
    expect(mine.body.result.buckets.filter((b) => b.name === 'photos')).toHaveLength(1);
  });
});
