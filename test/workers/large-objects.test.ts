import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { accountSubdomain, api, callFunction, enableWorkersDev, functionsPort, uploadScript } from './helpers.ts';

const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');

// GET /k: whole object; GET /k?offset=&length=: a range; PUT /k: stores the body.
const SCRIPT = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const key = url.pathname.slice(1);
    if (request.method === 'PUT') {
      const object = await env.BUCKET.put(key, request.body);
      return new Response(object.etag);
    }
    const offset = url.searchParams.get('offset');
    const range = offset === null ? undefined : { offset: Number(offset), length: Number(url.searchParams.get('length')) };
    const object = await env.BUCKET.get(key, range ? { range } : {});
    if (object === null) return new Response('missing', { status: 404 });
    return new Response(object.body, { headers: { etag: object.httpEtag, 'x-size': String(object.size) } });
  },
};`;

/**
 * Bodies above the buffered size (64 KiB) that lie within one blob file are sent by the backend from the
 * open file through buffers it reuses (send-file.ts); bodies spanning several blobs (multipart) stream.
 */
describe('large objects through a function', () => {
  let ledge: TestLedge;
  let host: string;
  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 1 } });
    await api(ledge, 'POST', `/accounts/${ledge.accountId}/r2/buckets`, { name: 'large' });
    const upload = await uploadScript(ledge, 'large', {
      modules: { 'index.js': SCRIPT },
      metadata: { bindings: [{ type: 'r2_bucket', name: 'BUCKET', bucket_name: 'large' }] },
    });
    expect(upload.status).toBe(200);
    await enableWorkersDev(ledge, 'large');
    host = `large.${await accountSubdomain(ledge)}.localhost`;
  });
  afterAll(async () => ledge?.close());

  it('serves a large object from its file, byte for byte, and the replacement after a PUT', async () => {
    const backend = ledge.server.platform.r2Backend;
    // 3 MiB + 17: several reads into the same buffer, the last one short.
    for (const size of [3 * 1024 * 1024 + 17, 64 * 1024 + 1]) {
      const body = randomBytes(size);
      const put = await callFunction(functionsPort(ledge), host, '/big', { method: 'PUT', body });
      expect(put).toMatchObject({ status: 200, text: md5(body) });
      const [files, local] = [backend.fileBodies, backend.localBodies];
      const got = await callFunction(functionsPort(ledge), host, '/big');
      expect(got.status).toBe(200);
      expect(got.body.equals(body)).toBe(true);
      expect(got.headers['etag']).toBe(`"${md5(body)}"`);
      expect(got.headers['x-size']).toBe(String(size));
      // A whole object is read by the isolate from the file itself (local-bodies.test.ts)...
      expect([backend.fileBodies, backend.localBodies]).toEqual([files, local + 1]);
      // ...a range of it is sent by the server from the open file (64 KiB or less: buffered).
      const ranged = await callFunction(functionsPort(ledge), host, `/big?offset=1&length=${size - 1}`);
      expect(ranged.body.equals(body.subarray(1))).toBe(true);
      expect(backend.fileBodies).toBe(size - 1 > 64 * 1024 ? files + 1 : files);
    }
  });

  it('serves a large range from the file too; small bodies and ranges come buffered', async () => {
    const backend = ledge.server.platform.r2Backend;
    const body = randomBytes(512 * 1024);
    await callFunction(functionsPort(ledge), host, '/ranged', { method: 'PUT', body });
    const before = backend.fileBodies;
    const slice = await callFunction(functionsPort(ledge), host, '/ranged?offset=100000&length=300000');
    expect(slice.body.equals(body.subarray(100_000, 400_000))).toBe(true);
    expect(backend.fileBodies).toBe(before + 1);
    const tail = await callFunction(functionsPort(ledge), host, '/ranged?offset=500000&length=24288');
    expect(tail.body.equals(body.subarray(500_000))).toBe(true);
    const small = Buffer.from('small body');
    await callFunction(functionsPort(ledge), host, '/small', { method: 'PUT', body: small });
    expect((await callFunction(functionsPort(ledge), host, '/small')).body.equals(small)).toBe(true);
    expect((await callFunction(functionsPort(ledge), host, '/missing')).status).toBe(404);
    expect(backend.fileBodies).toBe(before + 1);
  });
});
