import {
  CreateBucketCommand,
  DeleteBucketCorsCommand,
  GetBucketCorsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutBucketCorsCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { bodyText, s3Client, s3CredentialsOf, s3Port, failure } from './helpers.ts';

describe('S3 API: temporary credentials and bucket CORS', () => {
  let ledge: TestLedge;
  let s3: S3Client;
  let tokenId: string;

  beforeAll(async () => {
    ledge = await startLedge();
    const credentials = await s3CredentialsOf(ledge);
    tokenId = credentials.accessKeyId;
    s3 = s3Client(ledge, credentials);
    await s3.send(new CreateBucketCommand({ Bucket: 'temp' }));
    await s3.send(new CreateBucketCommand({ Bucket: 'other' }));
  });
  afterAll(async () => {
    s3?.destroy();
    await ledge?.close();
  });

  async function mint(body: Record<string, unknown>) {
    const response = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/r2/temp-access-credentials`, {
      method: 'POST',
      headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ parentAccessKeyId: tokenId, ttlSeconds: 900, ...body }),
    });
    expect(response.status).toBe(200);
    const result = (
      (await response.json()) as { result: { accessKeyId: string; secretAccessKey: string; sessionToken: string } }
    ).result;
    return new S3Client({
      endpoint: `http://127.0.0.1:${s3Port(ledge)}`,
      region: 'auto',
      forcePathStyle: true,
      credentials: result,
    });
  }

  it('a temporary credential works within its bucket, prefix and permission, and nowhere else', async () => {
    const temp = await mint({ bucket: 'temp', permission: 'object-read-write', prefixes: ['uploads/'] });
    await temp.send(new PutObjectCommand({ Bucket: 'temp', Key: 'uploads/a.txt', Body: 'temporary' }));
    expect(await bodyText((await s3.send(new GetObjectCommand({ Bucket: 'temp', Key: 'uploads/a.txt' }))).Body)).toBe(
      'temporary',
    );
    const listed = await temp.send(new ListObjectsV2Command({ Bucket: 'temp', Prefix: 'uploads/' }));
    expect(listed.Contents?.map((c) => c.Key)).toEqual(['uploads/a.txt']);
    for (const refused of [
      () => temp.send(new PutObjectCommand({ Bucket: 'temp', Key: 'elsewhere.txt', Body: 'no' })),
      () => temp.send(new PutObjectCommand({ Bucket: 'other', Key: 'uploads/a.txt', Body: 'no' })),
      () => temp.send(new ListObjectsV2Command({ Bucket: 'temp' })),
      () =>
        temp.send(
          new PutBucketCorsCommand({
            Bucket: 'temp',
            CORSConfiguration: { CORSRules: [{ AllowedMethods: ['GET'], AllowedOrigins: ['*'] }] },
          }),
        ),
    ]) {
      expect((await failure(refused())).name).toBe('AccessDenied');
    }
    const missing = await failure(s3.send(new GetObjectCommand({ Bucket: 'temp', Key: 'elsewhere.txt' })));
    expect(missing.name).toBe('NoSuchKey');

    const reader = await mint({ bucket: 'temp', permission: 'object-read-only' });
    expect(
      await bodyText((await reader.send(new GetObjectCommand({ Bucket: 'temp', Key: 'uploads/a.txt' }))).Body),
    ).toBe('temporary');
    expect(
      (await failure(reader.send(new PutObjectCommand({ Bucket: 'temp', Key: 'uploads/b', Body: 'x' })))).name,
    ).toBe('AccessDenied');
    // The same access key id without the session token is the parent token's key: its secret differs.
    const withoutSession = new S3Client({
      endpoint: `http://127.0.0.1:${s3Port(ledge)}`,
      region: 'auto',
      forcePathStyle: true,
      credentials: { accessKeyId: tokenId, secretAccessKey: (await reader.config.credentials()).secretAccessKey },
    });
    expect(
      (await failure(withoutSession.send(new GetObjectCommand({ Bucket: 'temp', Key: 'uploads/a.txt' })))).name,
    ).toBe('SignatureDoesNotMatch');
    for (const client of [temp, reader, withoutSession]) client.destroy();
  });

  it('bucket CORS over S3 is the /client/v4 configuration, and lets a browser PUT with a presigned URL', async () => {
    const none = await failure(s3.send(new GetBucketCorsCommand({ Bucket: 'temp' })));
    expect(none.name).toBe('NoSuchCORSConfiguration');
    await s3.send(
      new PutBucketCorsCommand({
        Bucket: 'temp',
        CORSConfiguration: {
          CORSRules: [
            {
              ID: 'browser-uploads',
              AllowedOrigins: ['https://app.example'],
              AllowedMethods: ['PUT', 'GET'],
              AllowedHeaders: ['content-type'],
              ExposeHeaders: ['etag'],
              MaxAgeSeconds: 600,
            },
          ],
        },
      }),
    );
    const v4 = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets/temp/cors`, {
      headers: ledge.tokenHeaders,
    });
    expect(((await v4.json()) as { result: unknown }).result).toEqual({
      rules: [
        {
          id: 'browser-uploads',
          allowed: { origins: ['https://app.example'], methods: ['PUT', 'GET'], headers: ['content-type'] },
          exposeHeaders: ['etag'],
          maxAgeSeconds: 600,
        },
      ],
    });
    const back = await s3.send(new GetBucketCorsCommand({ Bucket: 'temp' }));
    expect(back.CORSRules?.[0]).toMatchObject({
      ID: 'browser-uploads',
      AllowedOrigins: ['https://app.example'],
      MaxAgeSeconds: 600,
    });

    // What a browser does: a preflight (unsigned) to the presigned URL, then the PUT with Origin.
    const url = await getSignedUrl(
      s3,
      new PutObjectCommand({ Bucket: 'temp', Key: 'browser.txt', ContentType: 'text/plain' }),
      {
        expiresIn: 60,
      },
    );
    const preflight = await fetch(url, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.status).toBe(200);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(preflight.headers.get('access-control-max-age')).toBe('600');
    const put = await fetch(url, {
      method: 'PUT',
      headers: { origin: 'https://app.example', 'content-type': 'text/plain' },
      body: 'uploaded from a browser',
    });
    expect(put.status).toBe(200);
    expect(put.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(put.headers.get('access-control-expose-headers')).toBe('etag');
    const refused = await fetch(url, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'PUT' },
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();

    await s3.send(new DeleteBucketCorsCommand({ Bucket: 'temp' }));
    expect((await failure(s3.send(new GetBucketCorsCommand({ Bucket: 'temp' })))).name).toBe('NoSuchCORSConfiguration');
    const afterDelete = await fetch(url, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'PUT' },
    });
    expect(afterDelete.status).toBe(403);
  });
});
