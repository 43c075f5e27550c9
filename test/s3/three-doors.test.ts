import { createHash } from 'node:crypto';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import {
  accountSubdomain,
  api,
  callFunction,
  enableWorkersDev,
  functionsPort,
  uploadScript,
} from '../workers/helpers.ts';
import { bodyBytes, s3Client, s3CredentialsOf } from './helpers.ts';

const MiB = 1024 * 1024;
const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');

// GET /k: the object's bytes, with what the binding reports in x-* headers; PUT /k: stores the body with
// the content type and one custom metadata entry taken from the request.
const SCRIPT = `export default {
  async fetch(request, env) {
    const key = decodeURIComponent(new URL(request.url).pathname.slice(1));
    if (request.method === 'PUT') {
      const object = await env.BUCKET.put(key, request.body, {
        httpMetadata: { contentType: request.headers.get('content-type'), cacheControl: 'max-age=5' },
        customMetadata: { origin: request.headers.get('x-origin') },
      });
      return new Response(object.etag);
    }
    const object = await env.BUCKET.get(key);
    if (object === null) return new Response('missing', { status: 404 });
    return new Response(object.body, {
      headers: {
        'x-etag': object.etag,
        'x-size': String(object.size),
        'x-http': encodeURIComponent(JSON.stringify(object.httpMetadata)),
        'x-custom': encodeURIComponent(JSON.stringify(object.customMetadata)),
      },
    });
  },
};`;

/** One object, three doors: the S3 API, a function's binding, and the /client/v4 object routes. */
describe('S3 API, binding and /client/v4 see the same objects', () => {
  let ledge: TestLedge;
  let s3: S3Client;
  let host: string;
  const v4 = (key: string, init: RequestInit = {}) =>
    fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets/doors/objects/${encodeURIComponent(key)}`, {
      ...init,
      headers: { ...ledge.tokenHeaders, ...(init.headers as Record<string, string>) },
    });
  const viaBinding = (key: string, init: Parameters<typeof callFunction>[3] = {}) =>
    callFunction(functionsPort(ledge), host, `/${encodeURIComponent(key)}`, init);

  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 1 } });
    s3 = s3Client(ledge, await s3CredentialsOf(ledge));
    await s3.send(new CreateBucketCommand({ Bucket: 'doors' }));
    const upload = await uploadScript(ledge, 'doors', {
      modules: { 'index.js': SCRIPT },
      metadata: { bindings: [{ type: 'r2_bucket', name: 'BUCKET', bucket_name: 'doors' }] },
    });
    expect(upload.status).toBe(200);
    await enableWorkersDev(ledge, 'doors');
    host = `doors.${await accountSubdomain(ledge)}.localhost`;
  });
  afterAll(async () => {
    s3?.destroy();
    await ledge?.close();
  });

  it('an object written through S3 reads back through the binding and /client/v4', async () => {
    for (const body of [Buffer.from('small s3 object'), Buffer.alloc(300_000, 5)]) {
      const key = `from-s3/${body.length}`;
      const put = await s3.send(
        new PutObjectCommand({
          Bucket: 'doors',
          Key: key,
          Body: body,
          ContentType: 'text/x-s3',
          CacheControl: 'no-store',
          Metadata: { origin: 's3', city: 'zürich' },
        }),
      );
      expect(put.ETag).toBe(`"${md5(body)}"`);
      const bound = await viaBinding(key);
      expect(bound.status).toBe(200);
      expect(bound.body.equals(body)).toBe(true);
      expect(bound.headers['x-etag']).toBe(md5(body));
      expect(JSON.parse(decodeURIComponent(String(bound.headers['x-http'])))).toEqual({
        contentType: 'text/x-s3',
        cacheControl: 'no-store',
      });
      // RFC 2047 is the header's transport: the stored value is the text itself.
      expect(JSON.parse(decodeURIComponent(String(bound.headers['x-custom'])))).toEqual({
        origin: 's3',
        city: 'zürich',
      });
      const rest = await v4(key);
      expect(Buffer.from(await rest.arrayBuffer()).equals(body)).toBe(true);
      expect(rest.headers.get('etag')).toBe(put.ETag);
      expect(rest.headers.get('content-type')).toBe('text/x-s3');
      expect(rest.headers.get('x-amz-meta-origin')).toBe('s3');
    }
  });

  it('a multipart object written through S3 has the same md5-of-md5s-N etag on every door', async () => {
    const parts = [Buffer.alloc(5 * MiB, 1), Buffer.alloc(2 * MiB, 2)];
    const key = 'from-s3/multipart';
    const { UploadId } = await s3.send(
      new CreateMultipartUploadCommand({ Bucket: 'doors', Key: key, ContentType: 'x/mp' }),
    );
    const etags = [];
    for (const [i, body] of parts.entries()) {
      etags.push(
        (await s3.send(new UploadPartCommand({ Bucket: 'doors', Key: key, UploadId, PartNumber: i + 1, Body: body })))
          .ETag!,
      );
    }
    const done = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'doors',
        Key: key,
        UploadId,
        MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
      }),
    );
    const expected = `${md5(Buffer.concat(parts.map((p) => createHash('md5').update(p).digest())))}-2`;
    expect(done.ETag).toBe(`"${expected}"`);
    const bound = await viaBinding(key);
    expect(bound.headers['x-etag']).toBe(expected);
    expect(bound.body.equals(Buffer.concat(parts))).toBe(true);
    expect((await v4(key)).headers.get('etag')).toBe(`"${expected}"`);
  });

  it('objects written through the binding and /client/v4 read back through S3 and list there', async () => {
    const fromBinding = Buffer.alloc(100_000, 9);
    const put = await viaBinding('from-binding', {
      method: 'PUT',
      body: fromBinding,
      headers: { 'content-type': 'image/x-binding', 'x-origin': 'binding' },
    });
    expect(put.text).toBe(md5(fromBinding));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'doors', Key: 'from-binding' }));
    expect((await bodyBytes(got.Body)).equals(fromBinding)).toBe(true);
    expect(got.ETag).toBe(`"${md5(fromBinding)}"`);
    expect(got.ContentType).toBe('image/x-binding');
    expect(got.CacheControl).toBe('max-age=5');
    expect(got.Metadata).toEqual({ origin: 'binding' });

    const fromApi = Buffer.from('written by the object API');
    const written = await v4('from-v4', {
      method: 'PUT',
      body: fromApi,
      headers: { 'content-type': 'text/x-v4', 'x-amz-meta-origin': 'v4' },
    });
    expect(written.status).toBe(200);
    const viaS3 = await s3.send(new GetObjectCommand({ Bucket: 'doors', Key: 'from-v4' }));
    expect(await viaS3.Body!.transformToString()).toBe('written by the object API');
    expect(viaS3.ETag).toBe(`"${md5(fromApi)}"`);
    expect(viaS3.Metadata).toEqual({ origin: 'v4' });

    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'doors', Prefix: 'from-' }));
    expect(listed.Contents?.map((c) => c.Key)).toEqual(
      ['from-binding', 'from-s3/300000', 'from-s3/15', 'from-s3/multipart', 'from-v4'].sort(),
    );
    const v4List = await api(ledge, 'GET', `/accounts/${ledge.accountId}/r2/buckets/doors/objects?prefix=from-s3/`);
    expect((v4List.body.result as { key: string }[]).map((o) => o.key)).toEqual([
      'from-s3/15',
      'from-s3/300000',
      'from-s3/multipart',
    ]);
  });
});
