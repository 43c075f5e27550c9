import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { callFunction, deployBucketProbe, functionsPort } from './helpers.ts';

/**
 * `GET /d/<how>/<key>` describes what the function got: `get` and `head` through the binding as user code calls
 * them (small objects may come from the isolate's cache, isolate/r2-cache.ts), `native` and `nativehead` through the
 * binding prototype's own methods (always workerd's objects, from the server). `PUT /<key>` stores the body
 * through the binding with http and custom metadata. `GET /t/<key>` answers the text of `get(key)`.
 */
const SCRIPT = `
const hex = (buffer) => buffer && [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');
async function describe(object, withBody) {
  if (object === null) return null;
  const own = {};
  for (const name of Object.getOwnPropertyNames(object)) {
    const d = Object.getOwnPropertyDescriptor(object, name);
    own[name] = { w: d.writable, e: d.enumerable, c: d.configurable, t: typeof d.value, date: d.value instanceof Date };
  }
  const headers = new Headers();
  object.writeHttpMetadata(headers);
  const checksums = object.checksums;
  const out = {
    class: Object.getPrototypeOf(object).constructor.name,
    tag: Object.prototype.toString.call(object),
    keys: Object.keys(object),
    enumerable: Object.fromEntries(Object.entries(own).filter(([, d]) => d.e)),
    json: JSON.parse(JSON.stringify(object)),
    headers: [...headers],
    httpEtag: object.httpEtag,
    uploaded: object.uploaded.getTime(),
    expires: object.httpMetadata.cacheExpiry instanceof Date,
    checksums: { class: Object.getPrototypeOf(checksums).constructor.name, json: checksums.toJSON(), md5: hex(checksums.md5), keys: Object.keys(checksums) },
  };
  if (withBody) {
    out.usedBefore = object.bodyUsed;
    out.text = await object.text();
    out.usedAfter = object.bodyUsed;
    out.again = await object.text().then(() => 'allowed', (error) => error.name);
  }
  return out;
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, how, ...rest] = url.pathname.split('/');
    if (request.method === 'PUT') {
      const object = await env.BUCKET.put(decodeURIComponent(how), request.body, {
        httpMetadata: { contentType: 'text/x-ledge', cacheControl: 'max-age=60', cacheExpiry: new Date(1445412480000) },
        customMetadata: { owner: 'tests', n: url.searchParams.get('n') ?? '' },
      });
      return new Response(object.etag);
    }
    const key = rest.join('/');
    if (how === 't') {
      const object = await env.BUCKET.get(key);
      return new Response(object === null ? 'null' : await object.text());
    }
    if (how === 'm') {
      // A result the function changes: the next result of the same (cached) object is untouched.
      const first = await env.BUCKET.get(key);
      first.customMetadata.owner = 'changed';
      first.httpMetadata.contentType = 'changed';
      first.uploaded.setTime(0);
      first.range.length = -1;
      await first.text();
      const next = await env.BUCKET.get(key);
      return Response.json({ owner: next.customMetadata.owner, contentType: next.httpMetadata.contentType, uploaded: next.uploaded.getTime() !== 0, range: next.range.length, text: await next.text() });
    }
    const [mode, ...keyParts] = rest;
    const name = decodeURIComponent(keyParts.join('/'));
    const proto = Object.getPrototypeOf(env.BUCKET);
    const pick = {
      get: () => env.BUCKET.get(name),
      head: () => env.BUCKET.head(name),
      native: () => proto.get.call(env.BUCKET, name),
      nativehead: () => proto.head.call(env.BUCKET, name),
    }[mode];
    const object = await pick();
    const described = await describe(object, mode === 'get' || mode === 'native');
    if (object !== null && (mode === 'get' || mode === 'head')) {
      // The class is workerd's own: instanceof the native object's constructor.
      const native = await (mode === 'get' ? proto.get.call(env.BUCKET, name) : proto.head.call(env.BUCKET, name));
      described.instanceOfNative = object instanceof native.constructor;
      if ('body' in native) await native.body.cancel();
    }
    return Response.json(described);
  },
};`;

describe('the isolate cache of small objects (issue 31)', () => {
  let ledge: TestLedge;
  let host: string;
  const call = (path: string, init?: Parameters<typeof callFunction>[3]) =>
    callFunction(functionsPort(ledge), host, path, init);
  const describeObject = async (how: string, key: string) => {
    const response = await call(`/d/${how}/${encodeURIComponent(key)}`);
    expect(response.status, response.text).toBe(200);
    return JSON.parse(response.text) as Record<string, unknown> | null;
  };
  const objectsUrl = (key: string) =>
    `${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets/cached/objects/${encodeURIComponent(key)}`;

  beforeAll(async () => {
    // Two processes: each isolate has its own cache, and every write must reach both.
    ledge = await startLedge({ flags: { functionsProcesses: 2 } });
    host = await deployBucketProbe(ledge, 'cached', 'cache-probe', SCRIPT);
  });
  afterAll(async () => ledge?.close());

  it('gives R2 objects from the cache: same class, properties, metadata, checksums and body as workerd', async () => {
    const key = 'ünï cödé';
    expect((await call(`/${encodeURIComponent(key)}?n=1`, { method: 'PUT', body: 'small body' })).status).toBe(200);
    const native = await describeObject('native', key);
    const nativeHead = await describeObject('nativehead', key);
    // The first get fills the cache (of the process it reached), the next ones are hits (each description also
    // makes one native call, for instanceof): all are what workerd gives.
    const backend = ledge.server.platform.r2Backend;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const onOneProcess = async (how: string) => {
      const response = await callFunction(functionsPort(ledge), host, `/d/${how}/${encodeURIComponent(key)}`, {
        agent,
      });
      expect(response.status, response.text).toBe(200);
      return JSON.parse(response.text) as Record<string, unknown>;
    };
    expect(await onOneProcess('get')).toEqual({ ...native, instanceOfNative: true });
    const calls = backend.calls;
    for (let i = 0; i < 3; i++) expect(await onOneProcess('get')).toEqual({ ...native, instanceOfNative: true });
    for (let i = 0; i < 3; i++) expect(await onOneProcess('head')).toEqual({ ...nativeHead, instanceOfNative: true });
    // With PostgreSQL other nodes may write: nothing is cached, every get and head reaches the server.
    const cached = process.env['LEDGE_TEST_DATABASE'] !== 'postgres';
    expect(backend.calls - calls).toBe(cached ? 6 : 12);
    agent.destroy();
    expect(native?.['json']).toMatchObject({ customMetadata: { owner: 'tests', n: '1' } });
    expect(native?.['headers']).toEqual([
      ['cache-control', 'max-age=60'],
      ['content-type', 'text/x-ledge'],
      ['expires', 'Wed, 21 Oct 2015 07:28:00 GMT'],
    ]);
    expect(native?.['text']).toBe('small body');
  });

  it('reads its own writes and every other door’s at once, in both processes', async () => {
    const key = 'raw';
    for (let round = 0; round < 30; round++) {
      // Alternate the doors: the binding, the /client/v4 object route, a delete.
      if (round % 3 === 0) {
        expect((await call(`/${key}`, { method: 'PUT', body: `binding ${round}` })).status).toBe(200);
      } else if (round % 3 === 1) {
        const put = await fetch(objectsUrl(key), { method: 'PUT', headers: ledge.tokenHeaders, body: `api ${round}` });
        expect(put.status).toBe(200);
      } else {
        const removed = await fetch(objectsUrl(key), { method: 'DELETE', headers: ledge.tokenHeaders });
        expect(removed.status).toBe(200);
      }
      const expected = round % 3 === 0 ? `binding ${round}` : round % 3 === 1 ? `api ${round}` : 'null';
      // Several reads on fresh connections spread over both processes: each one is a hit or a fill.
      const reads = await Promise.all(Array.from({ length: 6 }, () => call(`/t/${key}`)));
      expect(reads.map((r) => r.text)).toEqual(Array(6).fill(expected));
    }
  });

  it('never serves a value older than the last acknowledged write while reads run alongside', async () => {
    const key = 'hot';
    let stop = false;
    let reads = 0;
    const readers = Array.from({ length: 4 }, async () => {
      while (!stop) {
        await call(`/t/${key}`);
        reads++;
      }
    });
    try {
      for (let version = 0; version < 40; version++) {
        const put = await fetch(objectsUrl(key), { method: 'PUT', headers: ledge.tokenHeaders, body: `v${version}` });
        expect(put.status).toBe(200);
        const seen = await call(`/t/${key}`);
        expect(seen.text).toBe(`v${version}`);
      }
    } finally {
      stop = true;
      await Promise.all(readers);
    }
    expect(reads).toBeGreaterThan(40);
  });

  it('keeps no copy of large objects, and a result changed by the function does not change the next one', async () => {
    const big = 'b'.repeat(200 * 1024);
    expect((await call('/big', { method: 'PUT', body: big })).status).toBe(200);
    expect((await call('/t/big')).text).toBe(big);
    expect((await call('/t/big')).text).toBe(big);
    const put = await fetch(objectsUrl('big'), { method: 'PUT', headers: ledge.tokenHeaders, body: 'now small' });
    expect(put.status).toBe(200);
    expect((await call('/t/big')).text).toBe('now small');
    expect((await call('/small?n=2', { method: 'PUT', body: 'abc' })).status).toBe(200);
    expect(JSON.parse((await call('/m/small')).text)).toEqual({
      owner: 'tests',
      contentType: 'text/x-ledge',
      uploaded: true,
      range: 3,
      text: 'abc',
    });
  });
});
