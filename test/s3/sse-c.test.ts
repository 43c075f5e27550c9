import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsCliEnv } from '../helpers/aws-cli.ts';
import { startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { trafficPort } from '../load-balancing/traffic-helpers.ts';
import { call as apiCall } from '../notifications/api-helpers.ts';
import { accountSubdomain, callFunction, enableWorkersDev, functionsPort, uploadScript } from '../workers/helpers.ts';
import { bodyBytes, run, s3Client, s3CredentialsOf, s3Port, signedFetch, tool, failure } from './helpers.ts';

const MiB = 1024 * 1024;
const AWS = tool('aws');
const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
const keyMd5 = (key: Buffer) => createHash('md5').update(key).digest('base64');

/** Plaintext that is easy to find on disk: a random 48-byte marker repeated. */
function marked(marker: Buffer, size: number): Buffer {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i += marker.length) marker.copy(out, i);
  return out;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Whether any file under the data dir (blob files, the SQLite database and its WAL) holds `needle`. */
function onDisk(dataDir: string, needle: Buffer): boolean {
  return filesUnder(dataDir).some((file) => {
    try {
      return readFileSync(file).includes(needle);
    } catch {
      return false;
    }
  });
}

// PUT /k with x-key: stores with ssecKey (hex); GET /k with x-key: reads with it; HEAD-like GET ?head: the
// binding's head() (no key, as R2's), reporting ssecKeyMd5.
const SCRIPT = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const key = decodeURIComponent(url.pathname.slice(1));
    const ssecKey = request.headers.get('x-key') ?? undefined;
    try {
      if (request.method === 'PUT') {
        const object = await env.BUCKET.put(key, request.body, { ssecKey });
        return new Response(object.ssecKeyMd5 ?? 'none');
      }
      if (request.method === 'POST') {
        // A multipart upload through the binding: two parts of 5 MiB and 1 KiB, each with the key.
        const upload = await env.BUCKET.createMultipartUpload(key, { ssecKey });
        const first = await upload.uploadPart(1, new Uint8Array(5 * 1024 * 1024).fill(1), { ssecKey });
        const second = await upload.uploadPart(2, new Uint8Array(1024).fill(2), { ssecKey });
        let refused = 'no';
        try {
          await upload.uploadPart(3, new Uint8Array(10));
        } catch (error) {
          refused = String(error.message);
        }
        const object = await upload.complete([first, second]);
        return new Response(JSON.stringify({ md5: object.ssecKeyMd5, refused }));
      }
      if (url.searchParams.has('head')) {
        const object = await env.BUCKET.head(key);
        return new Response(object?.ssecKeyMd5 ?? 'none');
      }
      const object = await env.BUCKET.get(key, ssecKey ? { ssecKey } : {});
      if (object === null) return new Response('missing', { status: 404 });
      return new Response(object.body, { headers: { 'x-md5': object.ssecKeyMd5 ?? 'none' } });
    } catch (error) {
      return new Response(String(error.message), { status: 500 });
    }
  },
};`;

describe('S3 API: SSE-C (customer-provided keys)', () => {
  let ledge: TestLedge;
  let s3: S3Client;
  const key = randomBytes(32);
  const other = randomBytes(32);
  const sse = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: key.toString('base64') };
  const wrong = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: other.toString('base64') };

  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 1 } });
    s3 = s3Client(ledge, await s3CredentialsOf(ledge));
    await s3.send(new CreateBucketCommand({ Bucket: 'secret' }));
  });
  afterAll(async () => {
    s3?.destroy();
    await ledge?.close();
  });

  it('encrypts at rest, reads back with the key (whole and ranges), refuses a missing or wrong key', async () => {
    const markerSmall = randomBytes(48);
    const markerLarge = randomBytes(48);
    const markerPlain = randomBytes(48);
    const small = marked(markerSmall, 1024); // inline in the metadata record
    const large = marked(markerLarge, 300_000); // a blob file
    for (const [name, body] of [
      ['small', small],
      ['large', large],
    ] as const) {
      const put = await s3.send(new PutObjectCommand({ Bucket: 'secret', Key: name, Body: body, ...sse }));
      expect(put.SSECustomerAlgorithm).toBe('AES256');
      expect(put.SSECustomerKeyMD5).toBe(keyMd5(key));
      const got = await s3.send(new GetObjectCommand({ Bucket: 'secret', Key: name, ...sse }));
      expect((await bodyBytes(got.Body)).equals(body)).toBe(true);
      expect(got.SSECustomerKeyMD5).toBe(keyMd5(key));
      // Ranges that start and end off the AES block boundaries.
      for (const [first, last] of [
        [17, 33],
        [1, body.length - 2],
        [body.length - 5, body.length - 1],
      ] as const) {
        const ranged = await s3.send(
          new GetObjectCommand({ Bucket: 'secret', Key: name, Range: `bytes=${first}-${last}`, ...sse }),
        );
        expect(ranged.$metadata.httpStatusCode).toBe(206);
        expect((await bodyBytes(ranged.Body)).equals(body.subarray(first, last + 1))).toBe(true);
      }
      const head = await s3.send(new HeadObjectCommand({ Bucket: 'secret', Key: name, ...sse }));
      expect(head.ContentLength).toBe(body.length);
      expect(head.SSECustomerAlgorithm).toBe('AES256');

      const missing = await failure(s3.send(new GetObjectCommand({ Bucket: 'secret', Key: name })));
      expect([missing.$metadata.httpStatusCode, missing.name]).toEqual([400, 'InvalidRequest']);
      const headMissing = await failure(s3.send(new HeadObjectCommand({ Bucket: 'secret', Key: name })));
      expect(headMissing.$metadata.httpStatusCode).toBe(400);
      const bad = await failure(s3.send(new GetObjectCommand({ Bucket: 'secret', Key: name, ...wrong })));
      expect([bad.$metadata.httpStatusCode, bad.name]).toEqual([403, 'AccessDenied']);
    }
    // A key for a plain object is refused; the plain object's bytes are on disk as they are (the control
    // that shows the search below can find plaintext).
    const plain = marked(markerPlain, 300_000);
    await s3.send(new PutObjectCommand({ Bucket: 'secret', Key: 'plain', Body: plain }));
    const notApplicable = await failure(s3.send(new GetObjectCommand({ Bucket: 'secret', Key: 'plain', ...sse })));
    expect([notApplicable.$metadata.httpStatusCode, notApplicable.name]).toEqual([400, 'InvalidRequest']);
    expect(onDisk(ledge.dataDir, markerPlain)).toBe(true);
    expect(onDisk(ledge.dataDir, markerLarge)).toBe(false);
    if (process.env['LEDGE_TEST_DATABASE'] !== 'postgres') expect(onDisk(ledge.dataDir, markerSmall)).toBe(false);
  });

  it('checks the headers as S3 does: algorithm, key, key MD5; a refused write stores nothing', async () => {
    const credentials = await s3CredentialsOf(ledge);
    const put = async (headers: Record<string, string>) => {
      const { response } = await signedFetch(ledge, credentials, {
        method: 'PUT',
        path: '/secret/x',
        headers,
        body: 'x',
      });
      return { status: response.status, code: /<Code>(\w+)<\/Code>/.exec(await response.text())?.[1] };
    };
    const b64 = key.toString('base64');
    const prefix = 'x-amz-server-side-encryption-customer-';
    const full = { [`${prefix}algorithm`]: 'AES256', [`${prefix}key`]: b64, [`${prefix}key-md5`]: keyMd5(key) };
    expect(await put({ ...full, [`${prefix}key-md5`]: keyMd5(other) })).toEqual({
      status: 400,
      code: 'InvalidArgument',
    });
    const short = randomBytes(16);
    expect(
      await put({ ...full, [`${prefix}key`]: short.toString('base64'), [`${prefix}key-md5`]: keyMd5(short) }),
    ).toEqual({ status: 400, code: 'InvalidArgument' });
    expect(await put({ ...full, [`${prefix}algorithm`]: 'AES128' })).toEqual({
      status: 400,
      code: 'InvalidEncryptionAlgorithmError',
    });
    expect(await put({ [`${prefix}algorithm`]: 'AES256' })).toEqual({ status: 400, code: 'InvalidArgument' });
    expect(await put({ [`${prefix}key`]: b64, [`${prefix}key-md5`]: keyMd5(key) })).toEqual({
      status: 400,
      code: 'InvalidArgument',
    });
    expect(await put({ [`${prefix}algorithm`]: 'AES256', [`${prefix}key`]: b64 })).toEqual({
      status: 400,
      code: 'InvalidArgument',
    });
    const none = await failure(s3.send(new HeadObjectCommand({ Bucket: 'secret', Key: 'x' })));
    expect(none.$metadata.httpStatusCode).toBe(404);
    expect((await put(full)).status).toBe(200);
  });

  it('multipart: every part needs the upload key; ranges across parts decrypt', { timeout: 60_000 }, async () => {
    const part1 = randomBytes(5 * MiB);
    const part2 = randomBytes(MiB + 7);
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'secret', Key: 'multi', ...sse }));
    expect(created.SSECustomerKeyMD5).toBe(keyMd5(key));
    const uploadId = created.UploadId!;
    const noKey = await failure(
      s3.send(
        new UploadPartCommand({ Bucket: 'secret', Key: 'multi', UploadId: uploadId, PartNumber: 1, Body: part1 }),
      ),
    );
    expect(noKey.$metadata.httpStatusCode).toBe(400);
    const wrongKey = await failure(
      s3.send(
        new UploadPartCommand({
          Bucket: 'secret',
          Key: 'multi',
          UploadId: uploadId,
          PartNumber: 1,
          Body: part1,
          ...wrong,
        }),
      ),
    );
    expect(wrongKey.$metadata.httpStatusCode).toBe(403);
    const etags: string[] = [];
    for (const [index, body] of [part1, part2].entries()) {
      const part = await s3.send(
        new UploadPartCommand({
          Bucket: 'secret',
          Key: 'multi',
          UploadId: uploadId,
          PartNumber: index + 1,
          Body: body,
          ...sse,
        }),
      );
      etags.push(part.ETag!);
    }
    const done = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'secret',
        Key: 'multi',
        UploadId: uploadId,
        MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
      }),
    );
    expect(done.ETag).toMatch(/-2"$/);
    const whole = Buffer.concat([part1, part2]);
    const got = await s3.send(new GetObjectCommand({ Bucket: 'secret', Key: 'multi', ...sse }));
    expect(sha256(await bodyBytes(got.Body))).toBe(sha256(whole));
    const across = await s3.send(
      new GetObjectCommand({ Bucket: 'secret', Key: 'multi', Range: `bytes=${5 * MiB - 100}-${5 * MiB + 99}`, ...sse }),
    );
    expect((await bodyBytes(across.Body)).equals(whole.subarray(5 * MiB - 100, 5 * MiB + 100))).toBe(true);
    const second = await s3.send(new GetObjectCommand({ Bucket: 'secret', Key: 'multi', PartNumber: 2, ...sse }));
    expect((await bodyBytes(second.Body)).equals(part2)).toBe(true);
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'secret', Key: 'multi' })))).name).toBe(
      'InvalidRequest',
    );
  });

  it('copies: source key and destination key, to plain and to a new key, and UploadPartCopy', async () => {
    const body = randomBytes(200_000);
    await s3.send(new PutObjectCommand({ Bucket: 'secret', Key: 'src', Body: body, ...sse }));
    const source = {
      CopySource: 'secret/src',
      CopySourceSSECustomerAlgorithm: 'AES256',
      CopySourceSSECustomerKey: key.toString('base64'),
    };
    const refused = await failure(
      s3.send(new CopyObjectCommand({ Bucket: 'secret', Key: 'dst', CopySource: 'secret/src' })),
    );
    expect(refused.$metadata.httpStatusCode).toBe(400);
    const wrongSource = await failure(
      s3.send(
        new CopyObjectCommand({
          ...source,
          Bucket: 'secret',
          Key: 'dst',
          CopySourceSSECustomerKey: other.toString('base64'),
        }),
      ),
    );
    expect(wrongSource.$metadata.httpStatusCode).toBe(403);

    const rekeyed = await s3.send(new CopyObjectCommand({ ...source, Bucket: 'secret', Key: 'dst', ...wrong }));
    expect(rekeyed.SSECustomerKeyMD5).toBe(keyMd5(other));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'secret', Key: 'dst', ...wrong }));
    expect((await bodyBytes(got.Body)).equals(body)).toBe(true);
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'secret', Key: 'dst', ...sse })))).name).toBe(
      'AccessDenied',
    );
    await s3.send(new CopyObjectCommand({ ...source, Bucket: 'secret', Key: 'decrypted' }));
    const plain = await s3.send(new GetObjectCommand({ Bucket: 'secret', Key: 'decrypted' }));
    expect((await bodyBytes(plain.Body)).equals(body)).toBe(true);
    // Re-keying an object onto itself is a legal self-copy (its encryption changes).
    await s3.send(new CopyObjectCommand({ ...source, Bucket: 'secret', Key: 'src', ...wrong }));
    const self = await s3.send(new GetObjectCommand({ Bucket: 'secret', Key: 'src', ...wrong }));
    expect((await bodyBytes(self.Body)).equals(body)).toBe(true);

    const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'secret', Key: 'pc', ...sse }));
    const copied = await s3.send(
      new UploadPartCopyCommand({
        Bucket: 'secret',
        Key: 'pc',
        UploadId: upload.UploadId!,
        PartNumber: 1,
        CopySource: 'secret/src',
        CopySourceRange: 'bytes=1000-1999',
        CopySourceSSECustomerAlgorithm: 'AES256',
        CopySourceSSECustomerKey: other.toString('base64'),
        ...sse,
      }),
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'secret',
        Key: 'pc',
        UploadId: upload.UploadId!,
        MultipartUpload: { Parts: [{ ETag: copied.CopyPartResult!.ETag!, PartNumber: 1 }] },
      }),
    );
    const pc = await s3.send(new GetObjectCommand({ Bucket: 'secret', Key: 'pc', ...sse }));
    expect((await bodyBytes(pc.Body)).equals(body.subarray(1000, 2000))).toBe(true);
  });

  it(
    'the AWS CLI: aws s3 cp --sse-c up and down (multipart), head-object, no key refused',
    { timeout: 120_000 },
    async () => {
      const home = tempDir('ledge-aws-ssec-');
      writeFileSync(join(home, 'key.bin'), key);
      const env = awsCliEnv(home, await s3CredentialsOf(ledge));
      const aws = (...args: string[]) =>
        run(AWS, ['--endpoint-url', `http://127.0.0.1:${s3Port(ledge)}`, ...args], { env, timeoutMs: 110_000 });
      const keyArgs = ['--sse-c', 'AES256', '--sse-c-key', `fileb://${join(home, 'key.bin')}`];
      const file = join(home, 'big.bin');
      const data = randomBytes(20 * MiB + 123);
      writeFileSync(file, data);
      await aws('s3', 'cp', file, 's3://secret/cli/big.bin', ...keyArgs, '--only-show-errors');
      const head = JSON.parse(
        (
          await aws(
            's3api',
            'head-object',
            '--bucket',
            'secret',
            '--key',
            'cli/big.bin',
            '--sse-customer-algorithm',
            'AES256',
            '--sse-customer-key',
            `fileb://${join(home, 'key.bin')}`,
          )
        ).stdout,
      ) as { ContentLength: number; SSECustomerKeyMD5: string; ETag: string };
      expect(head.ContentLength).toBe(data.length);
      expect(head.SSECustomerKeyMD5).toBe(keyMd5(key));
      expect(head.ETag).toMatch(/-3"$/);
      const back = join(home, 'back.bin');
      await aws('s3', 'cp', 's3://secret/cli/big.bin', back, ...keyArgs, '--only-show-errors');
      expect(sha256(readFileSync(back))).toBe(sha256(data));
      await expect(aws('s3', 'cp', 's3://secret/cli/big.bin', join(home, 'nokey.bin'))).rejects.toThrow();
    },
  );

  it('the binding: put/get with ssecKey, head shows ssecKeyMd5, get without the key fails; one object, two doors', async () => {
    const upload = await uploadScript(ledge, 'ssec', {
      modules: { 'index.js': SCRIPT },
      metadata: { bindings: [{ type: 'r2_bucket', name: 'BUCKET', bucket_name: 'secret' }] },
    });
    expect(upload.status).toBe(200);
    await enableWorkersDev(ledge, 'ssec');
    const host = `ssec.${await accountSubdomain(ledge)}.localhost`;
    const call = (path: string, init: Parameters<typeof callFunction>[3] = {}) =>
      callFunction(functionsPort(ledge), host, path, init);
    const hex = key.toString('hex');
    const body = randomBytes(100_000);
    const put = await call('/bound', { method: 'PUT', headers: { 'x-key': hex }, body });
    expect(put.body.toString()).toBe(keyMd5(key));
    const got = await call('/bound', { headers: { 'x-key': hex } });
    expect(got.status).toBe(200);
    expect(got.body.equals(body)).toBe(true);
    expect((await call('/bound?head')).body.toString()).toBe(keyMd5(key));
    const noKey = await call('/bound');
    expect(noKey.status).toBe(500);
    expect(noKey.body.toString()).toMatch(/Server Side Encryption.*\(10080\)/);
    const wrongKey = await call('/bound', { headers: { 'x-key': other.toString('hex') } });
    expect(wrongKey.body.toString()).toMatch(/\(10082\)/);
    const multipart = await call('/bound-mp', { method: 'POST', headers: { 'x-key': hex } });
    const answer = JSON.parse(multipart.body.toString()) as { md5: string; refused: string };
    expect(answer.md5).toBe(keyMd5(key));
    expect(answer.refused).toMatch(/\(10080\)/);
    const mp = await s3.send(
      new GetObjectCommand({ Bucket: 'secret', Key: 'bound-mp', Range: 'bytes=5242870-5242889', ...sse }),
    );
    expect([...(await bodyBytes(mp.Body))]).toEqual([...Array(10).fill(1), ...Array(10).fill(2)]);
    // The same object through S3 with the same key; an S3 SSE-C object through the binding.
    const viaS3 = await s3.send(new GetObjectCommand({ Bucket: 'secret', Key: 'bound', ...sse }));
    expect((await bodyBytes(viaS3.Body)).equals(body)).toBe(true);
    const s3Body = randomBytes(300_000);
    await s3.send(new PutObjectCommand({ Bucket: 'secret', Key: 'from-s3', Body: s3Body, ...sse }));
    const fromS3 = await call('/from-s3', { headers: { 'x-key': hex } });
    expect(fromS3.status).toBe(200);
    expect(fromS3.body.equals(s3Body)).toBe(true);
    // /client/v4 has no way to send a key: the encrypted object is refused there, as on R2.
    const v4 = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets/secret/objects/bound`, {
      headers: ledge.tokenHeaders,
    });
    expect(v4.status).toBe(400);
    // Nor can a public URL: the managed public domain refuses it (GET and HEAD); a plain object is served.
    const managed = await apiCall(ledge, 'PUT', `/accounts/${ledge.accountId}/r2/buckets/secret/domains/managed`, {
      enabled: true,
    });
    const publicHost = (managed.body as { result: { domain: string } }).result.domain;
    // node:http, not fetch: fetch does not send a Host of the caller's choosing.
    const viaPublic = (path: string, method = 'GET') =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port: trafficPort(ledge), path, method, headers: { host: publicHost }, agent: false },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end();
      });
    expect((await viaPublic('/bound')).status).toBe(400);
    expect((await viaPublic('/bound', 'HEAD')).status).toBe(400);
    await s3.send(new PutObjectCommand({ Bucket: 'secret', Key: 'open', Body: 'not secret' }));
    expect((await viaPublic('/open')).text).toBe('not secret');
  });
});
