import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { bodyText, s3Client, s3CredentialsOf, s3Port, signedFetch, type S3Credentials, failure } from './helpers.ts';

/** An S3 error answer read with plain fetch: status and the XML's Code. */
async function errorOf(response: Response): Promise<{ status: number; code: string | undefined }> {
  const text = await response.text();
  return { status: response.status, code: /<Code>([^<]*)<\/Code>/.exec(text)?.[1] };
}

describe('S3 API authentication', () => {
  let ledge: TestLedge;
  let credentials: S3Credentials;
  let s3: S3Client;
  let v4: (path: string, init?: RequestInit) => Promise<Response>;

  beforeAll(async () => {
    ledge = await startLedge();
    credentials = await s3CredentialsOf(ledge);
    s3 = s3Client(ledge, credentials);
    await s3.send(new CreateBucketCommand({ Bucket: 'auth' }));
    v4 = (path, init = {}) =>
      fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}${path}`, { ...init, headers: { ...ledge.tokenHeaders } });
  });
  afterAll(async () => {
    s3?.destroy();
    await ledge?.close();
  });

  const objectExists = async (key: string) =>
    (await v4(`/r2/buckets/auth/objects/${encodeURIComponent(key)}`)).status === 200;

  it('makes the key pair from the token: id and SHA-256 hex of its value', async () => {
    expect(credentials.accessKeyId).toMatch(/^[0-9a-f]{32}$/);
    expect(credentials.secretAccessKey).toMatch(/^[0-9a-f]{64}$/);
    await s3.send(new PutObjectCommand({ Bucket: 'auth', Key: 'ok', Body: 'fine' }));
    expect(await objectExists('ok')).toBe(true);
  });

  it('refuses a wrong secret (SignatureDoesNotMatch), an unknown key and anonymous requests, writing nothing', async () => {
    const wrong = s3Client(ledge, { ...credentials, secretAccessKey: 'f'.repeat(64) });
    const refused = await failure(wrong.send(new PutObjectCommand({ Bucket: 'auth', Key: 'forged', Body: 'no' })));
    expect(refused.name).toBe('SignatureDoesNotMatch');
    expect(refused.$metadata.httpStatusCode).toBe(403);
    const streamed = await failure(
      wrong.send(
        new PutObjectCommand({
          Bucket: 'auth',
          Key: 'forged',
          Body: Readable.from([Buffer.from('no')]),
          ContentLength: 2,
        }),
      ),
    );
    expect(streamed.name).toBe('SignatureDoesNotMatch');
    const unknown = s3Client(ledge, { accessKeyId: '0'.repeat(32), secretAccessKey: credentials.secretAccessKey });
    expect(
      (await failure(unknown.send(new PutObjectCommand({ Bucket: 'auth', Key: 'forged', Body: 'no' })))).name,
    ).toBe('InvalidAccessKeyId');
    const anonymous = await fetch(`http://127.0.0.1:${s3Port(ledge)}/auth/forged`, { method: 'PUT', body: 'no' });
    expect(await errorOf(anonymous)).toEqual({ status: 403, code: 'AccessDenied' });
    expect(await objectExists('forged')).toBe(false);
    wrong.destroy();
    unknown.destroy();
  });

  it('refuses a request signed with a clock 20 minutes off (RequestTimeTooSkewed)', async () => {
    const skewed = new S3Client({
      endpoint: `http://127.0.0.1:${s3Port(ledge)}`,
      region: 'auto',
      forcePathStyle: true,
      credentials,
      systemClockOffset: -20 * 60_000,
      maxAttempts: 1,
    });
    const refused = await failure(skewed.send(new PutObjectCommand({ Bucket: 'auth', Key: 'skewed', Body: 'late' })));
    expect(refused.name).toBe('RequestTimeTooSkewed');
    expect(await objectExists('skewed')).toBe(false);
    skewed.destroy();
  });

  it('accepts the regions auto, us-east-1 and empty, and refuses others', async () => {
    const east = s3Client(ledge, credentials, { region: 'us-east-1' });
    await east.send(new PutObjectCommand({ Bucket: 'auth', Key: 'region-us-east-1', Body: 'r' }));
    east.destroy();
    // The SDK will not sign for an empty region: its own signer, driven directly, will.
    const empty = await signedFetch(ledge, credentials, {
      method: 'PUT',
      path: '/auth/region-empty',
      body: 'r',
      region: '',
    });
    expect(empty.response.status).toBe(200);
    expect(await objectExists('region-empty')).toBe(true);
    const elsewhere = s3Client(ledge, credentials, { region: 'eu-west-1' });
    const refused = await failure(
      elsewhere.send(new PutObjectCommand({ Bucket: 'auth', Key: 'region-eu', Body: 'r' })),
    );
    expect(refused.name).toBe('AuthorizationHeaderMalformed');
    expect(await objectExists('region-eu')).toBe(false);
    elsewhere.destroy();
  });

  it('presigned GET and PUT work; an expired, tampered or over-long one does not', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'auth', Key: 'shared/file.txt', Body: 'presigned body' }));
    const getUrl = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'auth', Key: 'shared/file.txt' }), {
      expiresIn: 60,
    });
    const got = await fetch(getUrl);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe('presigned body');

    const putUrl = await getSignedUrl(s3, new PutObjectCommand({ Bucket: 'auth', Key: 'uploaded.bin' }), {
      expiresIn: 60,
    });
    const put = await fetch(putUrl, { method: 'PUT', body: 'from a browser' });
    expect(put.status).toBe(200);
    expect(await bodyText((await s3.send(new GetObjectCommand({ Bucket: 'auth', Key: 'uploaded.bin' }))).Body)).toBe(
      'from a browser',
    );

    const past = new Date(Date.now() - 120_000);
    const expiredUrl = await getSignedUrl(s3, new PutObjectCommand({ Bucket: 'auth', Key: 'expired.bin' }), {
      expiresIn: 60,
      signingDate: past,
    });
    expect(await errorOf(await fetch(expiredUrl, { method: 'PUT', body: 'late' }))).toEqual({
      status: 403,
      code: 'AccessDenied',
    });
    expect(await objectExists('expired.bin')).toBe(false);

    const tampered = putUrl.replace('uploaded.bin', 'other.bin');
    expect(await errorOf(await fetch(tampered, { method: 'PUT', body: 'x' }))).toEqual({
      status: 403,
      code: 'SignatureDoesNotMatch',
    });
    expect(await objectExists('other.bin')).toBe(false);
    const tooLong = getUrl.replace(/X-Amz-Expires=\d+/, 'X-Amz-Expires=604801');
    expect(await errorOf(await fetch(tooLong))).toEqual({ status: 400, code: 'AuthorizationQueryParametersError' });
  });

  it('a read-only token reads but cannot write; a token of another account cannot reach this one', async () => {
    const accounts = ledge.server.platform.accounts;
    const user = await accounts.getUserByEmail(ledge.email);
    const readOnly = await accounts.createToken({ userId: user!.id, name: 'ro', readOnly: true });
    const reader = s3Client(ledge, await s3CredentialsOf(ledge, readOnly.value));
    expect(await bodyText((await reader.send(new GetObjectCommand({ Bucket: 'auth', Key: 'ok' }))).Body)).toBe('fine');
    const refused = await failure(reader.send(new PutObjectCommand({ Bucket: 'auth', Key: 'ro-write', Body: 'no' })));
    expect(refused.name).toBe('AccessDenied');
    expect(await objectExists('ro-write')).toBe(false);
    reader.destroy();

    const other = await accounts.createAccount({ name: 'other' });
    const { user: stranger } = await accounts.createUser({ email: 'stranger@example.com' });
    await accounts.addMember(other.id, stranger.id);
    const token = await accounts.createToken({ userId: stranger.id, name: 'stranger' });
    const strangerKeys = await s3CredentialsOf(ledge, token.value);
    // On a bare address the credential's one account is used: this account's bucket is not there.
    const bare = s3Client(ledge, strangerKeys);
    const missing = await failure(bare.send(new PutObjectCommand({ Bucket: 'auth', Key: 'foreign', Body: 'no' })));
    expect(missing.name).toBe('NoSuchBucket');
    // Addressed by host, this account refuses it.
    const byHost = s3Client(ledge, strangerKeys, { host: 'account' });
    const denied = await failure(byHost.send(new PutObjectCommand({ Bucket: 'auth', Key: 'foreign', Body: 'no' })));
    expect(denied.name).toBe('AccessDenied');
    expect(await objectExists('foreign')).toBe(false);
    bare.destroy();
    byHost.destroy();
  });

  it('addresses the account by host, path-style and virtual-hosted-style', async () => {
    const byAccount = s3Client(ledge, credentials, { host: 'account' });
    await byAccount.send(new PutObjectCommand({ Bucket: 'auth', Key: 'hosted/path', Body: 'p' }));
    const virtual = s3Client(ledge, credentials, { host: 'virtual' });
    await virtual.send(new PutObjectCommand({ Bucket: 'auth', Key: 'hosted/virtual', Body: 'v' }));
    const listed = await virtual.send(new ListObjectsV2Command({ Bucket: 'auth', Prefix: 'hosted/' }));
    expect(listed.Contents?.map((c) => c.Key)).toEqual(['hosted/path', 'hosted/virtual']);
    // A raw request with the virtual host: the bucket comes from the host.
    const presigned = await getSignedUrl(virtual, new GetObjectCommand({ Bucket: 'auth', Key: 'hosted/virtual' }), {
      expiresIn: 30,
    });
    expect(new URL(presigned).hostname).toBe(`auth.${ledge.accountId}.r2.localhost`);
    byAccount.destroy();
    virtual.destroy();
  });

  it('answers operations R2 does not offer with 501 NotImplemented', async () => {
    const base = `http://127.0.0.1:${s3Port(ledge)}`;
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'auth', Key: 'ok' }), { expiresIn: 30 });
    // The presigner signs what it is given; an ACL read is another resource, so sign that one.
    const { GetObjectAclCommand, PutBucketVersioningCommand, GetObjectTaggingCommand } =
      await import('@aws-sdk/client-s3');
    for (const command of [
      new GetObjectAclCommand({ Bucket: 'auth', Key: 'ok' }),
      new GetObjectTaggingCommand({ Bucket: 'auth', Key: 'ok' }),
      new PutBucketVersioningCommand({ Bucket: 'auth', VersioningConfiguration: { Status: 'Enabled' } }),
    ]) {
      const refused = await failure(s3.send(command as never));
      expect(refused.$metadata.httpStatusCode).toBe(501);
      expect(refused.name).toBe('NotImplemented');
    }
    expect(url.startsWith(base)).toBe(true);
  });
});
