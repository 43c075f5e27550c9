import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import {
  accountSubdomain,
  callFunction,
  deployBucketProbe,
  enableWorkersDev,
  functionsPort,
  tenant,
  uploadScript,
} from './helpers.ts';

const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');
const KiB = 1024;

/**
 * `/<read>/<key>`: gets the key and answers what the function saw: the body read by `read` (stream, text,
 * arrayBuffer, bytes, json, blob), with the object's metadata and the R2ObjectBody's own state as headers.
 * `PUT /<key>` stores the body with a content type and custom metadata. `/env` lists the env's keys.
 */
const SCRIPT = `import { env as moduleEnv } from 'cloudflare:workers';
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, read, key] = url.pathname.split('/');
    if (request.method === 'PUT') {
      const object = await env.BUCKET.put(read, request.body, {
        httpMetadata: { contentType: 'application/x-ledge' },
        customMetadata: { owner: 'tests' },
      });
      return new Response(object.etag);
    }
    if (read === 'env') return Response.json({ env: Object.keys(env), moduleEnv: Object.keys(moduleEnv) });
    if (read === 'probe') {
      // What the function could reach of the blob directory through the module env (nothing: the shim took it).
      const blobs = moduleEnv.__LEDGE_BLOBS_0;
      if (!blobs) return new Response('unreachable');
      const answer = await blobs.fetch('http://blobs/' + url.searchParams.get('path'));
      return new Response(await answer.text(), { status: answer.status });
    }
    const onlyIf = url.searchParams.get('etag') ? { etagDoesNotMatch: url.searchParams.get('etag') } : undefined;
    const object = await env.BUCKET.get(key, onlyIf ? { onlyIf } : {});
    if (object === null) return new Response('missing', { status: 404 });
    const headers = new Headers();
    object.writeHttpMetadata(headers);
    headers.set('x-custom', JSON.stringify(object.customMetadata));
    headers.set('x-size', String(object.size));
    headers.set('x-etag', object.httpEtag);
    headers.set('x-range', JSON.stringify(object.range));
    headers.set('x-class', Object.getPrototypeOf(object).constructor.name);
    if (!('body' in object)) return new Response(null, { status: 412, headers });
    headers.set('x-used-before', String(object.bodyUsed));
    let body;
    if (read === 'stream') return new Response(object.body, { headers });
    if (read === 'text') body = await object.text();
    if (read === 'arrayBuffer') body = await object.arrayBuffer();
    if (read === 'bytes') body = await object.bytes();
    if (read === 'json') body = JSON.stringify(await object.json());
    if (read === 'blob') {
      const blob = await object.blob();
      headers.set('x-blob-type', blob.type);
      body = await blob.arrayBuffer();
    }
    headers.set('x-used-after', String(object.bodyUsed));
    headers.set('x-second-read', await object.text().then(() => 'allowed', (error) => error.name));
    return new Response(body, { headers });
  },
};`;

/** Every blob file under a directory, as paths relative to it. */
function filesUnder(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
  );
}

/**
 * Large whole-object gets through a binding: the server answers with the metadata only and the isolate
 * reads the blob file itself (isolate/local-body.ts). What the function sees must not change.
 */
describe('large bodies read by the isolate from the account blob directory', () => {
  let ledge: TestLedge;
  let other: TestLedge;
  let host: string;
  let otherHost: string;
  const body = randomBytes(300 * KiB + 7);
  const json = Buffer.from(JSON.stringify({ filler: 'x'.repeat(100 * KiB), n: 1 }));
  const get = (path: string, on = host) => callFunction(functionsPort(ledge), on, path);
  const put = (key: string, data: Buffer, on = host) =>
    callFunction(functionsPort(ledge), on, `/${key}`, { method: 'PUT', body: data });

  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 1 } });
    other = await tenant(ledge, 'Other');
    host = await deployBucketProbe(ledge, 'bodies', 'reader', SCRIPT);
    otherHost = await deployBucketProbe(other, 'theirs', 'prober', SCRIPT);
    expect(await put('big', body)).toMatchObject({ status: 200, text: md5(body) });
    expect((await put('doc', json)).status).toBe(200);
  });
  afterAll(async () => ledge?.close());

  it('streams the whole object from the file, byte for byte, with the same headers as from the server', async () => {
    const backend = ledge.server.platform.r2Backend;
    const [local, files] = [backend.localBodies, backend.fileBodies];
    const got = await get('/stream/big');
    expect(got.status).toBe(200);
    expect(got.body.equals(body)).toBe(true);
    expect(got.headers['content-length']).toBe(String(body.length));
    expect(got.headers['content-type']).toBe('application/x-ledge');
    expect(got.headers['x-etag']).toBe(`"${md5(body)}"`);
    expect(got.headers['x-size']).toBe(String(body.length));
    expect(JSON.parse(got.headers['x-range'] as string)).toEqual({ offset: 0, length: body.length });
    // The server's per-boot entry is gone: the function sees exactly the metadata it stored.
    expect(JSON.parse(got.headers['x-custom'] as string)).toEqual({ owner: 'tests' });
    // Still workerd's own R2ObjectBody (its C++ class name).
    expect(got.headers['x-class']).toBe('GetResult');
    expect(backend.localBodies).toBe(local + 1);
    expect(backend.fileBodies).toBe(files);
  });

  it("reads with text, arrayBuffer, bytes, json and blob as R2ObjectBody's own methods do", async () => {
    for (const read of ['arrayBuffer', 'bytes', 'blob']) {
      const got = await get(`/${read}/big`);
      expect(got.body.equals(body), read).toBe(true);
      expect(got.headers['x-used-before'], read).toBe('false');
      expect(got.headers['x-used-after'], read).toBe('true');
      expect(got.headers['x-second-read'], read).toBe('TypeError');
    }
    expect((await get('/blob/big')).headers['x-blob-type']).toBe('application/x-ledge');
    expect((await get('/text/doc')).body.equals(json)).toBe(true);
    expect(JSON.parse((await get('/json/doc')).text)).toEqual(JSON.parse(json.toString()));
  });

  it('leaves ranges, failed preconditions and small objects to the server', async () => {
    const backend = ledge.server.platform.r2Backend;
    const local = backend.localBodies;
    const failed = await get(`/stream/big?etag=${md5(body)}`);
    expect(failed.status).toBe(412);
    expect(JSON.parse(failed.headers['x-custom'] as string)).toEqual({ owner: 'tests' });
    expect((await put('small', Buffer.from('tiny'))).status).toBe(200);
    expect((await get('/text/small')).text).toBe('tiny');
    expect(backend.localBodies).toBe(local);
  });

  it('hides the blob bindings from env and the module env, and keeps each bucket to its own blob directory', async () => {
    const seen = JSON.parse((await get('/env')).text) as { env: string[]; moduleEnv: string[] };
    expect(seen.env).toEqual(['BUCKET']);
    // The platform's modules take their bindings out of the module env (cloudflare:workers) too.
    expect(seen.moduleEnv).toEqual(['BUCKET']);
    const root = ledge.server.platform.storage.bucketBlobDirectory(ledge.accountId, 'bodies')!;
    const mine = filesUnder(root);
    expect(mine.length).toBeGreaterThanOrEqual(2);
    const theirs = filesUnder(ledge.server.platform.storage.bucketBlobDirectory(other.accountId, 'theirs')!);
    expect(theirs.filter((path) => mine.includes(path))).toEqual([]);
    expect((await get(`/probe?path=${encodeURIComponent(mine[0]!)}`, otherHost)).text).toBe('unreachable');
    expect((await get(`/probe?path=${encodeURIComponent(mine[0]!)}`)).text).toBe('unreachable');
    // And their own function does read through it the same way.
    const data = randomBytes(200 * KiB);
    expect((await put('theirs', data, otherHost)).status).toBe(200);
    expect((await get('/stream/theirs', otherHost)).body.equals(data)).toBe(true);
  });

  it('works the same for a script on the oldest compatibility date', async () => {
    const upload = await uploadScript(ledge, 'old-reader', {
      modules: {
        'index.js': `export default { async fetch(request, env) {
          const object = await env.BUCKET.get('big');
          const copy = await env.BUCKET.get('big');
          return new Response(object.body, { headers: { 'x-text-length': String((await copy.text()).length) } });
        } };`,
      },
      metadata: {
        compatibility_date: '2021-11-03',
        bindings: [{ type: 'r2_bucket', name: 'BUCKET', bucket_name: 'bodies' }],
      },
    });
    expect(upload.status, JSON.stringify(upload.body.errors)).toBe(200);
    expect((await enableWorkersDev(ledge, 'old-reader')).status).toBe(200);
    const backend = ledge.server.platform.r2Backend;
    const local = backend.localBodies;
    const got = await get('/', `old-reader.${await accountSubdomain(ledge)}.localhost`);
    expect(got.status).toBe(200);
    expect(got.body.equals(body)).toBe(true);
    expect(backend.localBodies).toBe(local + 2);
  });

  it('falls back to the server when the file is gone, and never answers an empty body', async () => {
    const data = randomBytes(100 * KiB);
    expect((await put('vanishing', data)).status).toBe(200);
    const root = ledge.server.platform.storage.bucketBlobDirectory(ledge.accountId, 'bodies')!;
    const before = new Set(filesUnder(root));
    // Remove the newest file behind the engine's back: the isolate's read fails, the server's too.
    const object = await ledge.server.platform.storage.objects.head(
      (await ledge.server.platform.storage.getBucket(ledge.accountId, 'bodies'))!,
      'vanishing',
    );
    const blobId = object!.segments[0]!.blobId;
    const path = blobId.split('/').at(-1)!;
    expect(before.has(`${path.slice(0, 2)}/${path}`)).toBe(true);
    rmSync(join(root, path.slice(0, 2), path));
    const backend = ledge.server.platform.r2Backend;
    const files = backend.fileBodies;
    const got = await get('/stream/vanishing');
    expect(got.status).toBe(500);
    expect(got.body.length).not.toBe(data.length);
    // The second try went to the server (which found no file either).
    expect(backend.fileBodies).toBe(files);
  });
});
