import { Agent } from 'node:http';
import { DeleteObjectsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { s3Client, s3CredentialsOf } from '../s3/helpers.ts';
import {
  accountSubdomain,
  api,
  callFunction,
  deployBucketProbe,
  enableWorkersDev,
  functionsPort,
  uploadScript,
} from './helpers.ts';

/**
 * `GET /l?o=<options JSON>` describes what `list(options)` gave the function as user code calls it (small listings
 * may come from the isolate's cache, isolate/r2-cache.ts), `GET /n?o=...` what the binding prototype's own `list`
 * gives (always workerd's, from the server). `GET /k?o=...` answers the listed keys only. `PUT /p/<key>`,
 * `DELETE /p/<key>` and `POST /mp/<key>` (a two-part multipart upload) write through the binding.
 */
const SCRIPT = `
function describeObject(object, native) {
  const own = {};
  for (const name of Object.getOwnPropertyNames(object)) {
    const d = Object.getOwnPropertyDescriptor(object, name);
    own[name] = { w: d.writable, e: d.enumerable, c: d.configurable, t: typeof d.value, date: d.value instanceof Date };
  }
  const headers = new Headers();
  object.writeHttpMetadata(headers);
  return {
    class: Object.getPrototypeOf(object).constructor.name,
    tag: Object.prototype.toString.call(object),
    enumerable: Object.fromEntries(Object.entries(own).filter(([, d]) => d.e)),
    json: JSON.parse(JSON.stringify(object)),
    headers: [...headers],
    httpEtag: object.httpEtag,
    uploaded: object.uploaded.getTime(),
    instanceOfNative: object instanceof native.constructor,
    checksums: Object.getPrototypeOf(object.checksums).constructor.name,
  };
}
function describeList(listed, native) {
  const own = {};
  for (const name of Object.getOwnPropertyNames(listed)) {
    const d = Object.getOwnPropertyDescriptor(listed, name);
    own[name] = { w: d.writable, e: d.enumerable, c: d.configurable, t: typeof d.value, array: Array.isArray(d.value) };
  }
  return {
    prototype: Object.getPrototypeOf(listed) === Object.prototype ? 'Object' : String(Object.getPrototypeOf(listed)),
    own,
    json: JSON.parse(JSON.stringify(listed)),
    objects: listed.objects.map((o, i) => describeObject(o, native.objects[i])),
  };
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, how, ...rest] = url.pathname.split('/');
    const key = decodeURIComponent(rest.join('/'));
    const proto = Object.getPrototypeOf(env.BUCKET);
    if (how === 'p' && request.method === 'PUT') {
      await env.BUCKET.put(key, request.body, {
        httpMetadata: { contentType: 'text/x-ledge', cacheControl: 'max-age=60' },
        customMetadata: { owner: 'tests' },
      });
      return new Response('ok');
    }
    if (how === 'p' && request.method === 'DELETE') {
      await env.BUCKET.delete(key);
      return new Response('ok');
    }
    if (how === 'mp') {
      const upload = await env.BUCKET.createMultipartUpload(key);
      const one = await upload.uploadPart(1, 'a'.repeat(5 * 1024 * 1024));
      const two = await upload.uploadPart(2, 'b');
      await upload.complete([one, two]);
      return new Response('ok');
    }
    const options = url.searchParams.has('o') ? JSON.parse(url.searchParams.get('o')) : undefined;
    if (how === 'k') {
      const listed = await env.BUCKET.list(options);
      return Response.json({ keys: listed.objects.map((o) => o.key + ':' + o.size), prefixes: listed.delimitedPrefixes });
    }
    if (how === 'm') {
      // A listing the function changes: the next listing (a hit) is untouched.
      const first = await env.BUCKET.list(options);
      first.objects[0].customMetadata.owner = 'changed';
      first.objects[0].uploaded.setTime(0);
      first.objects.pop();
      first.delimitedPrefixes.push('x');
      first.truncated = 'changed';
      const next = await env.BUCKET.list(options);
      return Response.json({ owner: next.objects[0].customMetadata.owner, uploaded: next.objects[0].uploaded.getTime() !== 0,
        count: next.objects.length, prefixes: next.delimitedPrefixes, truncated: next.truncated });
    }
    const native = await proto.list.call(env.BUCKET, options);
    const listed = how === 'n' ? native : await env.BUCKET.list(options);
    return Response.json(describeList(listed, native));
  },
};`;

describe('the isolate cache of small listings (issue 31)', () => {
  let ledge: TestLedge;
  let host: string;
  const cached = process.env['LEDGE_TEST_DATABASE'] !== 'postgres';
  const call = (path: string, init?: Parameters<typeof callFunction>[3]) =>
    callFunction(functionsPort(ledge), host, path, init);
  const withOptions = (how: string, options: unknown) =>
    `/${how}${options === undefined ? '' : `?o=${encodeURIComponent(JSON.stringify(options))}`}`;
  const objectsUrl = (key: string) =>
    `${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets/listed/objects/${encodeURIComponent(key)}`;
  const keysSeen = async (options: unknown, init?: Parameters<typeof callFunction>[3]) => {
    const response = await call(withOptions('k', options), init);
    expect(response.status, response.text).toBe(200);
    return JSON.parse(response.text) as { keys: string[]; prefixes: string[] };
  };

  beforeAll(async () => {
    // Two processes: each isolate has its own cache, and every write must reach both.
    ledge = await startLedge({ flags: { functionsProcesses: 2 } });
    host = await deployBucketProbe(ledge, 'listed', 'list-probe', SCRIPT);
    for (const key of ['a/1', 'a/2', 'a/3', 'a/deep/4', 'b/5', 'c'])
      expect((await call(`/p/${encodeURIComponent(key)}`, { method: 'PUT', body: `body of ${key}` })).status).toBe(200);
  });
  afterAll(async () => ledge?.close());

  it('gives R2 listings from the cache: same members, objects, classes and metadata as workerd, for every option', async () => {
    const backend = ledge.server.platform.r2Backend;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const onOneProcess = async (how: string, options: unknown) => {
      const response = await call(withOptions(how, options), { agent });
      expect(response.status, response.text).toBe(200);
      return JSON.parse(response.text) as { json: { cursor?: string } };
    };
    const first = await onOneProcess('n', { limit: 2 });
    const cursor = first.json.cursor;
    expect(cursor).toBeTypeOf('string');
    const optionSets: unknown[] = [
      undefined,
      {},
      { prefix: 'a/' },
      { prefix: 'a/', delimiter: '/' },
      { delimiter: '/' },
      { limit: 2 },
      { limit: 2, cursor },
      { startAfter: 'a/2' },
      { include: ['httpMetadata'] },
      { include: ['customMetadata', 'httpMetadata'], prefix: 'a/' },
      { prefix: 'none/' },
    ];
    for (const options of optionSets) {
      const native = await onOneProcess('n', options);
      // The first fills the cache of the process it reached, the next ones are hits: all are workerd's.
      const calls = backend.calls;
      for (let i = 0; i < 3; i++) expect(await onOneProcess('l', options), JSON.stringify(options)).toEqual(native);
      // Each description makes one native call too (for instanceof); with PostgreSQL nothing is cached.
      expect(backend.calls - calls, JSON.stringify(options)).toBe(cached ? 4 : 6);
    }
    agent.destroy();
    // Odd options and options the cache does not take (other members) give workerd's answer, its errors too.
    for (const options of [
      { prefix: 'a/', limit: 1.5 },
      { prefix: 'a/', other: 1 },
      { prefix: 'a/', include: [] },
    ]) {
      const listed = await call(withOptions('l', options));
      expect(listed.text, JSON.stringify(options)).toBe((await call(withOptions('n', options))).text);
    }
    expect((await keysSeen({ prefix: 'a/', limit: 1.5 })).keys).toEqual(['a/1:11']);
    const refused = await call(withOptions('l', { limit: 0 }));
    const refusedNative = await call(withOptions('n', { limit: 0 }));
    expect(refused.status).toBe(refusedNative.status);
  });

  it('a listing the function changes does not change the next one', async () => {
    const options = { prefix: 'a/', delimiter: '/', include: ['customMetadata'] };
    expect(JSON.parse((await call(withOptions('m', options))).text)).toEqual({
      owner: 'tests',
      uploaded: true,
      count: 3,
      prefixes: ['a/deep/'],
      truncated: false,
    });
  });

  it('shows every write, through every door, in the next listing of both processes', async () => {
    const storage = ledge.server.platform.storage;
    const s3 = s3Client(ledge, await s3CredentialsOf(ledge));
    const options = { prefix: 'w/' };
    // Listings on fresh connections spread over both processes: each one is a hit or a fill.
    const everywhere = async () => {
      const seen = await Promise.all(Array.from({ length: 6 }, () => keysSeen(options)));
      for (const listing of seen) expect(listing).toEqual(seen[0]);
      return seen[0]!.keys;
    };
    expect(await everywhere()).toEqual([]);
    const doors: [string, () => Promise<unknown>, string[]][] = [
      ['binding put', () => call('/p/w%2F1', { method: 'PUT', body: 'one' }), ['w/1:3']],
      [
        '/client/v4 put',
        () => fetch(objectsUrl('w/2'), { method: 'PUT', headers: ledge.tokenHeaders, body: 'two!' }),
        ['w/1:3', 'w/2:4'],
      ],
      [
        'S3 put',
        () => s3.send(new PutObjectCommand({ Bucket: 'listed', Key: 'w/3', Body: 'three' })),
        ['w/1:3', 'w/2:4', 'w/3:5'],
      ],
      ['binding put over a key', () => call('/p/w%2F1', { method: 'PUT', body: 'ONE!!' }), ['w/1:5', 'w/2:4', 'w/3:5']],
      [
        '/client/v4 delete',
        () => fetch(objectsUrl('w/2'), { method: 'DELETE', headers: ledge.tokenHeaders }),
        ['w/1:5', 'w/3:5'],
      ],
      [
        'multipart completion',
        () => call('/mp/w%2F4', { method: 'POST' }),
        ['w/1:5', 'w/3:5', `w/4:${5 * 1024 * 1024 + 1}`],
      ],
      [
        'S3 delete',
        () => s3.send(new DeleteObjectsCommand({ Bucket: 'listed', Delete: { Objects: [{ Key: 'w/3' }] } })),
        ['w/1:5', `w/4:${5 * 1024 * 1024 + 1}`],
      ],
      ['binding delete', () => call('/p/w%2F1', { method: 'DELETE' }), [`w/4:${5 * 1024 * 1024 + 1}`]],
    ];
    for (const [door, write, expected] of doors) {
      // Filled first, so the write has a cached listing to drop.
      await everywhere();
      const answer = (await write()) as { status?: number; $metadata?: { httpStatusCode?: number } };
      expect(answer.status ?? answer.$metadata?.httpStatusCode, door).toBe(200);
      expect(await everywhere(), door).toEqual(expected);
    }
    // Lifecycle expiry (as its job runs it) and a storage class transition.
    await api(ledge, 'PUT', `/accounts/${ledge.accountId}/r2/buckets/listed/lifecycle`, {
      rules: [
        {
          id: 'w',
          enabled: true,
          conditions: { prefix: 'w/' },
          deleteObjectsTransition: { condition: { type: 'Age', maxAge: 60 } },
        },
      ],
    });
    await everywhere();
    expect(await storage.lifecycle.run(Date.now() + 3600_000)).toMatchObject({ deleted: 1 });
    expect(await everywhere(), 'lifecycle expiry').toEqual([]);
    s3.destroy();
  });

  it('never lists an older state than the last acknowledged write while listings run alongside', async () => {
    const options = { prefix: 'hot/' };
    let stop = false;
    let reads = 0;
    const readers = Array.from({ length: 4 }, async () => {
      while (!stop) {
        await keysSeen(options);
        reads++;
      }
    });
    try {
      for (let version = 0; version < 30; version++) {
        const put = await fetch(objectsUrl(`hot/${version}`), {
          method: 'PUT',
          headers: ledge.tokenHeaders,
          body: 'v',
        });
        expect(put.status).toBe(200);
        expect((await keysSeen(options)).keys).toHaveLength(version + 1);
      }
    } finally {
      stop = true;
      await Promise.all(readers);
    }
    expect(reads).toBeGreaterThan(30);
  });

  it('a bucket deleted and created again under its name is not listed as it was', async () => {
    const name = 'again';
    const bucketsUrl = `/accounts/${ledge.accountId}/r2/buckets`;
    expect((await api(ledge, 'POST', bucketsUrl, { name })).status).toBe(200);
    const upload = await uploadScript(ledge, 'list-again', {
      modules: { 'index.js': SCRIPT },
      metadata: { bindings: [{ type: 'r2_bucket', name: 'BUCKET', bucket_name: name }] },
    });
    expect(upload.status, JSON.stringify(upload.body.errors)).toBe(200);
    expect((await enableWorkersDev(ledge, 'list-again')).status).toBe(200);
    const again = `list-again.${await accountSubdomain(ledge)}.localhost`;
    const list = async () =>
      Promise.all(
        Array.from({ length: 6 }, async () => {
          const response = await callFunction(functionsPort(ledge), again, '/k');
          return JSON.parse(response.text) as { keys: string[] };
        }),
      );
    for (const listing of await list()) expect(listing.keys).toEqual([]);
    expect((await api(ledge, 'DELETE', `${bucketsUrl}/${name}`)).status).toBe(200);
    expect((await api(ledge, 'POST', bucketsUrl, { name })).status).toBe(200);
    const url = `${ledge.apiUrl}${bucketsUrl}/${name}/objects/new`;
    expect((await fetch(url, { method: 'PUT', headers: ledge.tokenHeaders, body: 'n' })).status).toBe(200);
    for (const listing of await list()) expect(listing.keys).toEqual(['new:1']);
  });
});
