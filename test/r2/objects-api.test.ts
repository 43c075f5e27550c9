import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';

// Response bodies are checked field by field below; their exact type does not matter here.
import type { AnyJson as Json } from '../helpers/envelope.ts';

let ledge: TestLedge;
let base: string;
beforeAll(async () => {
  ledge = await startLedge();
  base = `${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets`;
  await fetch(base, { method: 'POST', headers: ledge.tokenHeaders, body: JSON.stringify({ name: 'objects' }) });
});
afterAll(async () => ledge?.close());

const url = (key: string) => `${base}/objects/objects/${key.split('/').map(encodeURIComponent).join('/')}`;
const md5 = (data: string | Buffer) => createHash('md5').update(data).digest('hex');

async function put(key: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const response = await fetch(url(key), { method: 'PUT', headers: { ...ledge.tokenHeaders, ...headers }, body });
  return { status: response.status, body: (await response.json()) as Json };
}

describe('object API', () => {
  it('puts an object with metadata headers and gets it back with them', async () => {
    const stored = await put('docs/ünï code.txt', 'content', {
      'content-type': 'text/markdown',
      'cache-control': 'no-cache',
      'x-amz-meta-author': 'ada',
    });
    expect(stored.status).toBe(200);
    expect(stored.body.result).toMatchObject({
      key: 'docs/ünï code.txt',
      size: '7', // a string in the upload answer, as the SDK's ObjectUploadResponse types it
      etag: md5('content'),
      custom_metadata: { author: 'ada' },
    });
    const got = await fetch(url('docs/ünï code.txt'), { headers: ledge.tokenHeaders });
    expect(got.status).toBe(200);
    expect(await got.text()).toBe('content');
    expect(got.headers.get('etag')).toBe(`"${md5('content')}"`);
    expect(got.headers.get('content-type')).toBe('text/markdown');
    expect(got.headers.get('cache-control')).toBe('no-cache');
    expect(got.headers.get('x-amz-meta-author')).toBe('ada');
    const head = await fetch(url('docs/ünï code.txt'), { method: 'HEAD', headers: ledge.tokenHeaders });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('7');
    expect(head.headers.get('etag')).toBe(`"${md5('content')}"`);
  });

  it('serves Range requests with 206 and conditional GETs with 304/412', async () => {
    await put('range.txt', '0123456789');
    const ranged = await fetch(url('range.txt'), { headers: { ...ledge.tokenHeaders, range: 'bytes=3-5' } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe('bytes 3-5/10');
    expect(await ranged.text()).toBe('345');
    const notModified = await fetch(url('range.txt'), {
      headers: { ...ledge.tokenHeaders, 'if-none-match': `"${md5('0123456789')}"` },
    });
    expect(notModified.status).toBe(304);
    const failed = await fetch(url('range.txt'), { headers: { ...ledge.tokenHeaders, 'if-match': '"nope"' } });
    expect(failed.status).toBe(412);
    expect(((await failed.json()) as Json).errors[0].code).toBe(10031);
  });

  it('lists objects with prefix, delimiter and cursor', async () => {
    for (const key of ['list/a', 'list/b', 'list/c/d']) await put(key, key);
    const first = (await (
      await fetch(`${base}/objects/objects?prefix=list/&delimiter=/&per_page=2`, { headers: ledge.tokenHeaders })
    ).json()) as Json;
    expect(first.result.map((o: { key: string }) => o.key)).toEqual(['list/a', 'list/b']);
    expect(first.result_info.is_truncated).toBe(true);
    const second: Json = await (
      await fetch(`${base}/objects/objects?prefix=list/&delimiter=/&per_page=2&cursor=${first.result_info.cursor}`, {
        headers: ledge.tokenHeaders,
      })
    ).json();
    expect(second.result).toEqual([]);
    expect(second.result_info).toMatchObject({ is_truncated: false, delimited: ['list/c/'] });
  });

  it('deletes an object; a later GET is 404/10007', async () => {
    await put('gone', 'x');
    expect((await fetch(url('gone'), { method: 'DELETE', headers: ledge.tokenHeaders })).status).toBe(200);
    const missing = await fetch(url('gone'), { headers: ledge.tokenHeaders });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as Json).errors[0].code).toBe(10007);
  });

  it('refuses a key over 1024 bytes with 400/10020 and stores nothing', async () => {
    const refused = await put('k'.repeat(1025), 'x');
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].code).toBe(10020);
    const list = (await (
      await fetch(`${base}/objects/objects?prefix=kkk`, { headers: ledge.tokenHeaders })
    ).json()) as Json;
    expect(list.result).toEqual([]);
  });

  it('refuses custom metadata over 8192 bytes with 400/10012', async () => {
    const refused = await put('meta', 'x', { 'x-amz-meta-big': 'v'.repeat(8200) });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].code).toBe(10012);
    expect((await fetch(url('meta'), { headers: ledge.tokenHeaders })).status).toBe(404);
  });

  it('refuses a Content-MD5 that does not match with 400/10037', async () => {
    const refused = await put('digest', 'payload', {
      'content-md5': Buffer.from(md5('other'), 'hex').toString('base64'),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].code).toBe(10037);
    expect((await fetch(url('digest'), { headers: ledge.tokenHeaders })).status).toBe(404);
  });

  it('refuses an invalid list limit with 400/10022', async () => {
    for (const perPage of ['0', '1001', 'abc']) {
      const response = await fetch(`${base}/objects/objects?per_page=${perPage}`, { headers: ledge.tokenHeaders });
      expect(response.status).toBe(400);
      expect(((await response.json()) as Json).errors[0].code).toBe(10022);
    }
  });

  it('answers 404/10006 for objects of a missing bucket', async () => {
    const response = await fetch(`${base}/missing-bucket/objects/k`, {
      method: 'PUT',
      headers: ledge.tokenHeaders,
      body: 'x',
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as Json).errors[0].code).toBe(10006);
  });
});
