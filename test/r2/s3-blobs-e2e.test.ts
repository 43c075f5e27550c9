import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  CreateMultipartUploadCommand,
  HeadBucketCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3BlobStore } from '../../src/storage/index.ts';
import { createS3Client } from '../../src/storage/s3-client.ts';
import { newId } from '../../src/shared/ids.ts';
import { systemClock } from '../../src/shared/clock.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { freePort } from '../helpers/free-port.ts';
import { spawnLedge, startLedge, tempDir, TEST_CREDENTIALS, type TestLedge } from '../helpers/ledge.ts';
import { startS3Server, type S3Server } from '../helpers/s3-server.ts';
import {
  accountSubdomain,
  api,
  callFunction,
  enableWorkersDev,
  functionsPort,
  uploadScript,
} from '../workers/helpers.ts';

const MiB = 1024 * 1024;
/** The bucket Ledge keeps its blobs in: missing at start, so the server creates it. */
const BLOB_BUCKET = 'ledge-e2e-blobs';
const PREFIX = 'node-a/';
const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');

// PUT /k stores the body, DELETE /k deletes, GET /?list lists keys, GET /k(?offset=&length=) reads.
const SCRIPT = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const key = url.pathname.slice(1);
    if (request.method === 'PUT') return new Response((await env.FILES.put(key, request.body)).etag);
    if (request.method === 'DELETE') { await env.FILES.delete(key); return new Response('deleted'); }
    if (url.searchParams.has('list')) return Response.json((await env.FILES.list()).objects.map((o) => o.key));
    const offset = url.searchParams.get('offset');
    const range = offset === null ? undefined : { offset: Number(offset), length: Number(url.searchParams.get('length')) };
    const object = await env.FILES.get(key, range ? { range } : {});
    if (object === null) return new Response('missing', { status: 404 });
    return new Response(object.body, { headers: { etag: object.httpEtag } });
  },
};`;

let swift: S3Server;
let inspect: S3Client;
let ledge: TestLedge;
const logLines: string[] = [];

/** The server's flags and keys for the throwaway Swift (keys through the environment only, as operators do). */
function s3Options(flags: { s3Endpoint?: string } = {}, secret?: string) {
  return {
    flags: {
      functionsProcesses: 1,
      s3Endpoint: swift.endpoint,
      s3Bucket: BLOB_BUCKET,
      s3ForcePathStyle: true,
      s3Prefix: 'node-a',
      ...flags,
    },
    env: { LEDGE_S3_ACCESS_KEY_ID: swift.accessKeyId, LEDGE_S3_SECRET_ACCESS_KEY: secret ?? swift.secretAccessKey },
  };
}

/** What Swift holds under Ledge's prefix: key -> size. */
async function swiftObjects(bucket = BLOB_BUCKET, prefix = PREFIX): Promise<Map<string, number>> {
  const listed = await inspect.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return new Map((listed.Contents ?? []).map((object) => [object.Key!, object.Size!]));
}

beforeAll(async () => {
  swift = await startS3Server();
  inspect = createS3Client({ ...swift, bucket: BLOB_BUCKET, prefix: '' });
  ledge = await startLedge({
    ...s3Options(),
    logger: createLogger('info', systemClock, {}, (line) => logLines.push(line), 'json'),
  });
});
afterAll(async () => {
  await ledge?.close();
  inspect?.destroy();
  await swift?.stop();
});

describe('ledge server with blobs on S3 (Swift s3api)', () => {
  it('creates the missing bucket at start and never logs the secret', async () => {
    expect(ledge.server.platform.blobStore).toBeInstanceOf(S3BlobStore);
    await inspect.send(new HeadBucketCommand({ Bucket: BLOB_BUCKET }));
    expect(logLines.some((line) => line.includes('blobs on S3') && line.includes(BLOB_BUCKET))).toBe(true);
    expect(logLines.join('\n')).not.toContain(swift.secretAccessKey);
  });

  it('puts, gets (whole and by range), lists and deletes objects through the R2 API, the bytes in Swift', async () => {
    const created = await api(ledge, 'POST', `/accounts/${ledge.accountId}/r2/buckets`, { name: 'api-files' });
    expect(created.status).toBe(200);
    const objects = `${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets/api-files/objects`;
    const body = randomBytes(10 * MiB + 7);
    const put = await fetch(`${objects}/docs/big.bin`, { method: 'PUT', headers: ledge.tokenHeaders, body });
    expect(put.status).toBe(200);
    const blobs = await swiftObjects();
    expect([...blobs.values()]).toEqual([body.length]);

    const got = await fetch(`${objects}/docs/big.bin`, { headers: ledge.tokenHeaders });
    expect(got.status).toBe(200);
    expect(md5(Buffer.from(await got.arrayBuffer()))).toBe(md5(body));
    // Across the store's 8 MiB part boundary.
    const ranged = await fetch(`${objects}/docs/big.bin`, {
      headers: { ...ledge.tokenHeaders, range: `bytes=${8 * MiB - 10}-${8 * MiB + 9}` },
    });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(body.subarray(8 * MiB - 10, 8 * MiB + 10))).toBe(true);

    const listed = (await (await fetch(`${objects}?prefix=docs/`, { headers: ledge.tokenHeaders })).json()) as {
      result: { key: string; size: number }[];
    };
    expect(listed.result.map((object) => object.key)).toEqual(['docs/big.bin']);

    expect((await fetch(`${objects}/docs/big.bin`, { method: 'DELETE', headers: ledge.tokenHeaders })).status).toBe(
      200,
    );
    expect((await fetch(`${objects}/docs/big.bin`, { headers: ledge.tokenHeaders })).status).toBe(404);
    // The blob goes after the grace period for readers; flushing runs it now.
    await ledge.server.platform.storage.flushGarbage();
    expect(await swiftObjects()).toEqual(new Map());
  });

  it("serves a deployed function's R2 binding from S3: a 10 MiB object put, read, ranged, listed and deleted", async () => {
    await api(ledge, 'POST', `/accounts/${ledge.accountId}/r2/buckets`, { name: 'fn-files' });
    const upload = await uploadScript(ledge, 'files', {
      modules: { 'index.js': SCRIPT },
      metadata: { bindings: [{ type: 'r2_bucket', name: 'FILES', bucket_name: 'fn-files' }] },
    });
    expect(upload.status).toBe(200);
    await enableWorkersDev(ledge, 'files');
    const host = `files.${await accountSubdomain(ledge)}.localhost`;
    const call = (path: string, init?: Parameters<typeof callFunction>[3]) =>
      callFunction(functionsPort(ledge), host, path, init);
    const backend = ledge.server.platform.r2Backend;
    const fileBodiesBefore = backend.fileBodies;

    const body = randomBytes(10 * MiB);
    expect(await call('/video.bin', { method: 'PUT', body })).toMatchObject({ status: 200, text: md5(body) });
    expect([...(await swiftObjects()).values()]).toEqual([body.length]);
    const whole = await call('/video.bin');
    expect(whole.status).toBe(200);
    expect(whole.body.equals(body)).toBe(true);
    const slice = await call(`/video.bin?offset=${8 * MiB - 100}&length=300000`);
    expect(slice.body.equals(body.subarray(8 * MiB - 100, 8 * MiB - 100 + 300_000))).toBe(true);
    // A small range of a large blob: the store's one-buffer read (readBytes).
    const small = await call('/video.bin?offset=5&length=10');
    expect(small.body.equals(body.subarray(5, 15))).toBe(true);
    // S3 blobs have no open file to send from: every body above went through the stream fallback.
    expect(backend.fileBodies).toBe(fileBodiesBefore);
    expect(JSON.parse((await call('/?list')).text)).toEqual(['video.bin']);

    expect((await call('/video.bin', { method: 'DELETE' })).text).toBe('deleted');
    expect((await call('/video.bin')).status).toBe(404);
    await ledge.server.platform.storage.flushGarbage();
    expect(await swiftObjects()).toEqual(new Map());
  });

  it('takes --s3-* flags and keys from the environment as a process, and finds its objects after a restart', async () => {
    const dataDir = tempDir();
    const args = [
      '--s3-endpoint',
      swift.endpoint,
      '--s3-bucket',
      'ledge-cli-blobs',
      '--s3-force-path-style',
      '--s3-prefix',
      'cli/',
    ];
    const env = { LEDGE_S3_ACCESS_KEY_ID: swift.accessKeyId, LEDGE_S3_SECRET_ACCESS_KEY: swift.secretAccessKey };
    const headers = { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` };
    const body = randomBytes(300 * 1024);
    let server = await spawnLedge(dataDir, args, env);
    try {
      const buckets = `${server.apiUrl}/accounts/${TEST_CREDENTIALS.accountId}/r2/buckets`;
      expect((await fetch(buckets, { method: 'POST', headers, body: JSON.stringify({ name: 'kept' }) })).status).toBe(
        200,
      );
      expect((await fetch(`${buckets}/kept/objects/a.bin`, { method: 'PUT', headers, body })).status).toBe(200);
      expect([...(await swiftObjects('ledge-cli-blobs', 'cli/')).values()]).toEqual([body.length]);
      expect(await server.stop()).toBe(0);
      // Nothing of the object in the data dir: the restarted server reads it from Swift.
      expect(existsSync(join(dataDir, 'blobs'))).toBe(false);
      server = await spawnLedge(dataDir, args, env);
      const got = await fetch(`${server.apiUrl}/accounts/${TEST_CREDENTIALS.accountId}/r2/buckets/kept/objects/a.bin`, {
        headers,
      });
      expect(md5(Buffer.from(await got.arrayBuffer()))).toBe(md5(body));
    } finally {
      await server.stop();
    }
  });

  it('leaves what another node is writing alone when it starts: an unfinished upload, a blob not yet committed', async () => {
    const inFlight = `${PREFIX}${newId()}`;
    const uncommitted = `${PREFIX}${newId()}`;
    await inspect.send(new CreateMultipartUploadCommand({ Bucket: BLOB_BUCKET, Key: inFlight }));
    await inspect.send(new PutObjectCommand({ Bucket: BLOB_BUCKET, Key: uncommitted, Body: 'bytes' }));
    // A second node on the same bucket and prefix; its records know neither (they are not committed yet).
    const second = await startLedge(s3Options());
    try {
      const uploads = await inspect.send(new ListMultipartUploadsCommand({ Bucket: BLOB_BUCKET, Prefix: PREFIX }));
      expect((uploads.Uploads ?? []).map((upload) => upload.Key)).toEqual([inFlight]);
      expect((await swiftObjects()).has(uncommitted)).toBe(true);
    } finally {
      await second.close();
    }
  });

  it('refuses to start when the S3 service is unreachable or refuses the key, saying so', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    await expect(startLedge(s3Options({ s3Endpoint: closed }))).rejects.toThrow(/S3 blob store: cannot reach bucket/);
    const refused = startLedge(s3Options({}, 'not-the-secret'));
    await expect(refused).rejects.toThrow(/S3 blob store: cannot reach bucket .*HTTP 403.*check the access key/);
  });
});
