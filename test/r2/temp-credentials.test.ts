import { createHash, createHmac } from 'node:crypto';
import Cloudflare from 'cloudflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  grantAllowsAction,
  grantAllowsKey,
  grantAllowsListing,
  type TemporaryCredentialService,
} from '../../src/r2/index.ts';
import { ManualClock } from '../helpers/manual-clock.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';

/** Issue 29, point 2: POST /accounts/{id}/r2/temp-access-credentials and the lookup the S3 endpoint uses. */
interface Envelope {
  success: boolean;
  result: { accessKeyId: string; secretAccessKey: string; sessionToken: string } | null;
  errors: { code: number; message: string }[];
}

let ledge: TestLedge;
let service: TemporaryCredentialService;
let ownerId: string;
/** A read-write and a read-only token of the owner, with their values (S3 secret = SHA-256 hex of the value). */
let rw: { id: string; value: string };
let ro: { id: string; value: string };
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The platform's time: credentials expire on it, so the expiry test advances it instead of waiting. */
const clock = new ManualClock();

beforeAll(async () => {
  ledge = await startLedge({ clock });
  const platform = ledge.server.platform;
  service = platform.tempCredentials;
  ownerId = (await platform.accounts.getUserByEmail(ledge.email))!.id;
  const write = await platform.accounts.createToken({ userId: ownerId, name: 'rw', accountId: ledge.accountId });
  const read = await platform.accounts.createToken({ userId: ownerId, name: 'ro', readOnly: true });
  rw = { id: write.token.id, value: write.value };
  ro = { id: read.token.id, value: read.value };
  await platform.storage.buckets.create(ledge.accountId, { name: 'photos' });
});
afterAll(async () => ledge?.close());

const url = () => `${ledge.apiUrl}/accounts/${ledge.accountId}/r2/temp-access-credentials`;

async function mint(body: Record<string, unknown>, headers: Record<string, string> = ledge.tokenHeaders) {
  const response = await fetch(url(), {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Envelope };
}

const sessionJwt = (sessionToken: string) =>
  Buffer.from(sessionToken, 'base64')
    .toString('utf8')
    .replace(/^jwt\//, '');
const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

describe('issuing temporary credentials', () => {
  it("issues R2's shape: the parent's key id, a JWT session token, the JWT's SHA-256 as the secret", async () => {
    const before = Math.floor(clock.now() / 1000);
    const { status, body } = await mint({
      bucket: 'photos',
      parentAccessKeyId: rw.id,
      permission: 'object-read-write',
      ttlSeconds: 900,
      prefixes: ['uploads/user-1/'],
      objects: ['shared/manifest.json'],
    });
    expect(status).toBe(200);
    const credentials = body.result!;
    expect(credentials.accessKeyId).toBe(rw.id);
    const raw = Buffer.from(credentials.sessionToken, 'base64').toString('utf8');
    expect(raw.startsWith('jwt/')).toBe(true);
    const jwt = sessionJwt(credentials.sessionToken);
    expect(credentials.secretAccessKey).toBe(sha256(jwt));
    // Signed HS256 with the parent's S3 secret (SHA-256 hex of the token value), as R2 documents.
    const [header, payload, signature] = jwt.split('.');
    const expected = createHmac('sha256', sha256(rw.value)).update(`${header}.${payload}`).digest('base64url');
    expect(signature).toBe(expected);
    const claims = claimsOf(jwt);
    expect(claims).toMatchObject({
      bucket: 'photos',
      scope: 'object-read-write',
      sub: ledge.accountId,
      iss: rw.id,
      paths: { prefixPaths: ['uploads/user-1/'], objectPaths: ['shared/manifest.json'] },
    });
    expect(claims['exp']).toBe((claims['iat'] as number) + 900);
    expect(claims['iat']).toBeGreaterThanOrEqual(before);

    const lookup = await service.resolve(credentials.accessKeyId, credentials.sessionToken);
    expect(lookup.ok).toBe(true);
    if (!lookup.ok) return;
    const { grant } = lookup;
    expect(grant).toMatchObject({
      accessKeyId: rw.id,
      secretAccessKey: credentials.secretAccessKey,
      accountId: ledge.accountId,
      bucket: 'photos',
      permission: 'object-read-write',
      prefixes: ['uploads/user-1/'],
      objects: ['shared/manifest.json'],
    });
    expect(grant.expiresAt).toBe((claims['exp'] as number) * 1000);
    expect(grantAllowsKey(grant, 'uploads/user-1/cat.jpg')).toBe(true);
    expect(grantAllowsKey(grant, 'shared/manifest.json')).toBe(true);
    expect(grantAllowsKey(grant, 'shared/other.json')).toBe(false);
    expect(grantAllowsKey(grant, 'uploads/user-2/cat.jpg')).toBe(false);
    expect(grantAllowsListing(grant, 'uploads/user-1/2026/')).toBe(true);
    expect(grantAllowsListing(grant, 'uploads/')).toBe(false);
    expect(grantAllowsAction(grant, 'PutObject')).toBe(true);
    expect(grantAllowsAction(grant, 'CompleteMultipartUpload')).toBe(true);
    expect(grantAllowsAction(grant, 'PutBucketCors')).toBe(false);
  });

  it('works through the official SDK', async () => {
    const sdk = new Cloudflare({ baseURL: ledge.apiUrl, apiToken: ledge.apiToken, maxRetries: 0 });
    const created = await sdk.r2.temporaryCredentials.create({
      account_id: ledge.accountId,
      bucket: 'photos',
      parentAccessKeyId: rw.id,
      permission: 'admin-read-only',
      ttlSeconds: 60,
    });
    expect(created.accessKeyId).toBe(rw.id);
    const lookup = await service.resolve(created.accessKeyId!, created.sessionToken!);
    expect(lookup.ok && lookup.grant.permission).toBe('admin-read-only');
    if (!lookup.ok) return;
    expect(grantAllowsAction(lookup.grant, 'GetBucketCors')).toBe(true);
    expect(grantAllowsAction(lookup.grant, 'PutBucketCors')).toBe(false);
    expect(grantAllowsAction(lookup.grant, 'PutObject')).toBe(false);
    expect(grantAllowsKey(lookup.grant, 'any/key')).toBe(true);
  });

  it('expires after ttlSeconds', async () => {
    const { body } = await mint({
      bucket: 'photos',
      parentAccessKeyId: rw.id,
      permission: 'object-read-only',
      ttlSeconds: 1,
    });
    const { accessKeyId, sessionToken } = body.result!;
    const exp = (claimsOf(sessionJwt(sessionToken))['exp'] as number) * 1000;
    expect((await service.resolve(accessKeyId, sessionToken, exp - 1)).ok).toBe(true);
    expect(await service.resolve(accessKeyId, sessionToken, exp)).toEqual({ ok: false, reason: 'expired' });
    // And on the platform's clock, which the service reads when not told the time.
    await clock.advance(Math.max(0, exp - clock.now()) + 50);
    expect(await service.resolve(accessKeyId, sessionToken)).toEqual({ ok: false, reason: 'expired' });
  });

  it('lets a read-only parent grant reads only', async () => {
    const write = await mint({ bucket: 'photos', parentAccessKeyId: ro.id, permission: 'object-read-write' });
    expect(write.status).toBe(403);
    expect(write.body.errors[0]?.message).toMatch(/read-only parent token cannot grant object-read-write/);
    expect((await mint({ bucket: 'photos', parentAccessKeyId: ro.id, permission: 'admin-read-write' })).status).toBe(
      403,
    );
    const read = await mint({
      bucket: 'photos',
      parentAccessKeyId: ro.id,
      permission: 'object-read-only',
      ttlSeconds: 60,
    });
    expect(read.status).toBe(200);
    const lookup = await service.resolve(read.body.result!.accessKeyId, read.body.result!.sessionToken);
    expect(lookup.ok).toBe(true);
    if (!lookup.ok) return;
    expect(grantAllowsAction(lookup.grant, 'GetObject')).toBe(true);
    expect(grantAllowsAction(lookup.grant, 'ListObjectsV2')).toBe(true);
    expect(grantAllowsAction(lookup.grant, 'PutObject')).toBe(false);
    expect(grantAllowsAction(lookup.grant, 'DeleteObject')).toBe(false);
  });

  it("refuses another account's token, another user's token and an unknown id alike", async () => {
    const platform = ledge.server.platform;
    const other = await platform.accounts.createAccount({ name: 'Other' });
    const { user } = await platform.accounts.createUser({ email: 'other@example.com' });
    await platform.accounts.addMember(other.id, user.id);
    // The owner's token limited to another account (the owner is a member there too).
    await platform.accounts.addMember(other.id, ownerId);
    const scopedElsewhere = await platform.accounts.createToken({ userId: ownerId, name: 'b', accountId: other.id });
    const othersToken = await platform.accounts.createToken({ userId: user.id, name: 'theirs' });
    await platform.accounts.addMember(ledge.accountId, user.id);
    for (const parent of [scopedElsewhere.token.id, othersToken.token.id, 'f'.repeat(32)]) {
      const answer = await mint({ bucket: 'photos', parentAccessKeyId: parent, permission: 'object-read-only' });
      expect(answer.status).toBe(400);
      expect(answer.body.errors[0]?.code).toBe(10040);
      expect(answer.body.errors[0]?.message).toMatch(/parentAccessKeyId does not name an active API token of yours/);
    }
    // The other account's own token cannot mint for this account's path either (its scope stops at its account).
    const theirHeaders = { authorization: `Bearer ${scopedElsewhere.value}` };
    const foreign = await mint(
      { bucket: 'photos', parentAccessKeyId: scopedElsewhere.token.id, permission: 'object-read-only' },
      theirHeaders,
    );
    expect(foreign.status).toBe(403);
  });

  it('refuses bad input with 10040 and a missing bucket with 10006', async () => {
    const base = { bucket: 'photos', parentAccessKeyId: rw.id, permission: 'object-read-only' };
    for (const body of [
      { ...base, ttlSeconds: 0 },
      { ...base, ttlSeconds: 604_801 },
      { ...base, ttlSeconds: 1.5 },
      { ...base, permission: 'everything' },
      { ...base, prefixes: [''] },
      { permission: 'object-read-only', parentAccessKeyId: rw.id },
    ]) {
      const answer = await mint(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.errors[0]?.code).toBe(10040);
    }
    const missing = await mint({ ...base, bucket: 'no-such-bucket' });
    expect(missing.status).toBe(404);
    expect(missing.body.errors[0]?.code).toBe(10006);
    // The maximum is allowed.
    expect((await mint({ ...base, ttlSeconds: 604_800 })).status).toBe(200);
  });
});

describe('resolving a session token', () => {
  it('refuses a tampered token, a token named under another key id, and one whose parent was revoked', async () => {
    const platform = ledge.server.platform;
    const doomed = await platform.accounts.createToken({ userId: ownerId, name: 'doomed' });
    const { body } = await mint({
      bucket: 'photos',
      parentAccessKeyId: doomed.token.id,
      permission: 'object-read-only',
    });
    const { accessKeyId, sessionToken } = body.result!;
    expect((await service.resolve(accessKeyId, sessionToken)).ok).toBe(true);

    const [header, , signature] = sessionJwt(sessionToken).split('.');
    const widened = Buffer.from(JSON.stringify({ ...claimsOf(sessionJwt(sessionToken)), bucket: 'other' })).toString(
      'base64url',
    );
    const tampered = Buffer.from(`jwt/${header}.${widened}.${signature}`).toString('base64');
    expect(await service.resolve(accessKeyId, tampered)).toEqual({ ok: false, reason: 'invalid' });
    expect(await service.resolve(rw.id, sessionToken)).toEqual({ ok: false, reason: 'invalid' });
    expect(await service.resolve(accessKeyId, 'not-a-token')).toEqual({ ok: false, reason: 'invalid' });
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${widened}.`;
    expect(await service.resolve(accessKeyId, Buffer.from(`jwt/${unsigned}`).toString('base64'))).toEqual({
      ok: false,
      reason: 'invalid',
    });

    await platform.db.run(`UPDATE api_tokens SET status = 'disabled' WHERE id = ?`, [doomed.token.id]);
    expect(await service.resolve(accessKeyId, sessionToken)).toEqual({ ok: false, reason: 'invalid' });
  });

  it("accepts credentials signed locally as R2's documentation shows (with an actions claim)", async () => {
    const now = Math.floor(clock.now() / 1000);
    const claims = {
      bucket: 'photos',
      scope: 'object-read-only',
      actions: ['GetObject', 'HeadObject'],
      paths: { prefixPaths: ['data/'], objectPaths: [] },
      sub: ledge.accountId,
      iss: rw.id,
      aud: `${ledge.accountId}.r2.localhost`,
      iat: now,
      exp: now + 900,
    };
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const body = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(claims)}`;
    const jwt = `${body}.${createHmac('sha256', sha256(rw.value)).update(body).digest('base64url')}`;
    const lookup = await service.resolve(rw.id, Buffer.from(`jwt/${jwt}`).toString('base64'));
    expect(lookup.ok).toBe(true);
    if (!lookup.ok) return;
    expect(lookup.grant.secretAccessKey).toBe(sha256(jwt));
    expect(grantAllowsAction(lookup.grant, 'GetObject')).toBe(true);
    expect(grantAllowsAction(lookup.grant, 'ListObjectsV2')).toBe(false);
    expect(grantAllowsKey(lookup.grant, 'data/a.csv')).toBe(true);
    expect(grantAllowsKey(lookup.grant, 'other/a.csv')).toBe(false);

    // More than 7 days between iat and exp is refused even when signed correctly.
    const long = { ...claims, exp: now + 604_801 };
    const longBody = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(long)}`;
    const longJwt = `${longBody}.${createHmac('sha256', sha256(rw.value)).update(longBody).digest('base64url')}`;
    expect((await service.resolve(rw.id, Buffer.from(`jwt/${longJwt}`).toString('base64'))).ok).toBe(false);
  });

  it("gives an ordinary token's S3 key pair as R2 does (id, SHA-256 hex of the value)", async () => {
    const pair = await ledge.server.platform.accounts.s3KeyPair(rw.id);
    expect(pair?.accessKeyId).toBe(rw.id);
    expect(pair?.secretAccessKey).toBe(sha256(rw.value));
    expect([...pair!.principal.accountIds]).toEqual([ledge.accountId]);
    expect((await ledge.server.platform.accounts.s3KeyPair(ro.id))?.principal.readOnly).toBe(true);
    expect(await ledge.server.platform.accounts.s3KeyPair('0'.repeat(32))).toBeUndefined();
  });
});
