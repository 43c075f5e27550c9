import { createHash } from 'node:crypto';
import { GetObjectCommand, ListBucketsCommand, PutObjectCommand, CreateBucketCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { ManualClock } from '../helpers/manual-clock.ts';
import { origin, signIn } from '../dashboard/helpers.ts';
import { failure, s3Client, s3CredentialsOf } from '../s3/helpers.ts';

const EDIT = 'c8fed203ed3043cba015a93ad1616f1f';
const HOUR = 3600_000;

/** Token lifetimes and presigned URLs judged on the server's clock: the test moves it instead of waiting. */
describe('lifetimes on the injected clock', () => {
  let ledge: TestLedge;
  const clock = new ManualClock();

  beforeAll(async () => {
    ledge = await startLedge({ clock });
  });
  afterAll(() => ledge.close());

  const verify = async (token: string) =>
    (await fetch(`${ledge.apiUrl}/user/tokens/verify`, { headers: { authorization: `Bearer ${token}` } })).status;

  it('a token starts at not_before and stops at expires_on, on the API and S3', async () => {
    const response = await fetch(`${ledge.apiUrl}/user/tokens`, {
      method: 'POST',
      headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'a window',
        policies: [
          {
            effect: 'allow',
            permission_groups: [{ id: EDIT }],
            resources: { [`com.cloudflare.api.account.${ledge.accountId}`]: '*' },
          },
        ],
        not_before: new Date(clock.now() + HOUR).toISOString(),
        expires_on: new Date(clock.now() + 2 * HOUR).toISOString(),
      }),
    });
    expect(response.status).toBe(200);
    const { id, value } = ((await response.json()) as { result: { id: string; value: string } }).result;
    const s3 = s3Client(ledge, { accessKeyId: id, secretAccessKey: createHash('sha256').update(value).digest('hex') });
    // Signed on the server's time, so a request is not refused for skew once the clock has moved.
    const send = () => {
      s3.config.systemClockOffset = clock.now() - Date.now();
      return s3.send(new ListBucketsCommand({}));
    };

    expect(await verify(value)).toBe(401);
    await clock.advance(HOUR);
    expect(await verify(value)).toBe(200);
    expect((await send()).Buckets).toBeDefined();
    await clock.advance(HOUR);
    expect(await verify(value)).toBe(401);
    expect((await failure(send())).name).toBe('InvalidAccessKeyId');
    s3.destroy();
  });

  it('a presigned URL works until X-Amz-Expires has passed on the server clock', async () => {
    const s3 = s3Client(ledge, await s3CredentialsOf(ledge));
    // The SDK resets its offset from the responses' Date header (the real time): set it for each request.
    const onServerTime = () => (s3.config.systemClockOffset = clock.now() - Date.now());
    onServerTime();
    await s3.send(new CreateBucketCommand({ Bucket: 'clocked' }));
    onServerTime();
    await s3.send(new PutObjectCommand({ Bucket: 'clocked', Key: 'k', Body: 'v' }));
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'clocked', Key: 'k' }), {
      expiresIn: 600,
      signingDate: new Date(clock.now()),
    });
    expect(await (await fetch(url)).text()).toBe('v');
    await clock.advance(601_000);
    const expired = await fetch(url);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain('Request has expired');
    s3.destroy();
  });

  it('a dashboard session left idle for 12 hours of server time is gone', async () => {
    const signed = await signIn(ledge, { api_token: ledge.apiToken });
    const session = async () =>
      (await fetch(`${origin(ledge)}/dashboard/session`, { headers: { cookie: signed.cookie } })).status;
    expect(await session()).toBe(200);
    await clock.advance(11 * HOUR);
    expect(await session()).toBe(200);
    await clock.advance(12 * HOUR + 1000);
    expect(await session()).toBe(401);
  });
});
