import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../src/db/index.ts';
import { ClusterStore, CLUSTER_STORE_BUCKET } from '../../src/s3/index.ts';
import { DEFAULT_HTTP_TIMEOUTS } from '../../src/shared/http-timeouts.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { systemClock } from '../../src/shared/clock.ts';
import { FsBlobStore, SqlMetadataStore, StorageService, storageMigrations } from '../../src/storage/index.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/backends.ts';
import { tempDir } from '../helpers/ledge.ts';
import { bodyText } from './helpers.ts';

const ONE = '1'.repeat(32);
const TWO = '2'.repeat(32);

/** An S3 client set up as workerd's cluster client is, from the store's `bucketOptions`. */
function clientFor(store: ClusterStore, accountId: string): { s3: S3Client; prefix: string } {
  const { bucket, bucketOptions } = store.bucketFor(accountId);
  const option = (name: string) => bucketOptions.find((o) => o.startsWith(`${name}=`))!.slice(name.length + 1);
  const s3 = new S3Client({
    endpoint: option('aws_endpoint'),
    region: 'auto',
    forcePathStyle: true,
    credentials: { accessKeyId: option('aws_access_key_id'), secretAccessKey: option('aws_secret_access_key') },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const url = new URL(bucket);
  expect(url.protocol).toBe('s3:');
  expect(url.host).toBe(CLUSTER_STORE_BUCKET);
  return { s3, prefix: `${url.pathname.slice(1)}/` };
}

async function statusOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    if (error instanceof S3ServiceException) return error.$metadata.httpStatusCode ?? 0;
    throw error;
  }
}

/**
 * The bucket workerd's cluster mode keeps its state in, served by Ledge's storage engine: conditional writes
 * decided as workerd needs them, and each account's instances confined to their own prefix.
 */
describe('cluster store', () => {
  let database: TestDatabase;
  let store: ClusterStore;

  beforeAll(async () => {
    database = await openTestDatabase('sqlite');
    await applyMigrations(database.db, storageMigrations, systemClock);
    const storage = new StorageService(
      new SqlMetadataStore(database.db, systemClock),
      new FsBlobStore(join(tempDir('ledge-cluster-store-'), 'blobs')),
      { clock: systemClock },
    );
    store = new ClusterStore({
      storage,
      secret: randomBytes(32),
      httpTimeouts: DEFAULT_HTTP_TIMEOUTS,
      logger: createLogger('error', systemClock),
      clock: systemClock,
    });
    await store.start();
  });

  afterAll(async () => {
    await store?.stop();
    await database?.close();
  });

  it('decides the conditional writes workerd claims objects with', async () => {
    const { s3, prefix } = clientFor(store, ONE);
    const Key = `${prefix}v1/do/ns/obj/own.json`;
    const put = (body: string, condition: { IfNoneMatch?: string; IfMatch?: string }) =>
      s3.send(new PutObjectCommand({ Bucket: CLUSTER_STORE_BUCKET, Key, Body: body, ...condition }));
    const first = await put('{"epoch":1}', { IfNoneMatch: '*' });
    expect(await statusOf(put('{"epoch":1}', { IfNoneMatch: '*' }))).toBe(412);
    const second = await put('{"epoch":2}', { IfMatch: first.ETag! });
    expect(await statusOf(put('{"epoch":3}', { IfMatch: first.ETag! }))).toBe(412);
    const read = await s3.send(new GetObjectCommand({ Bucket: CLUSTER_STORE_BUCKET, Key }));
    expect(read.ETag).toBe(second.ETag);
    expect(await bodyText(read.Body)).toBe('{"epoch":2}');
  });

  it("keeps each account's instances to their own prefix", async () => {
    const one = clientFor(store, ONE);
    const two = clientFor(store, TWO);
    expect(one.prefix).toBe(`engines/${ONE}/`);
    const Key = `${one.prefix}v1/nodes/a.json`;
    await one.s3.send(new PutObjectCommand({ Bucket: CLUSTER_STORE_BUCKET, Key, Body: 'lease' }));

    // Account two's key reads, lists, overwrites and deletes nothing of account one's.
    expect(await statusOf(two.s3.send(new GetObjectCommand({ Bucket: CLUSTER_STORE_BUCKET, Key })))).toBe(403);
    expect(
      await statusOf(two.s3.send(new PutObjectCommand({ Bucket: CLUSTER_STORE_BUCKET, Key, Body: 'stolen' }))),
    ).toBe(403);
    expect(await statusOf(two.s3.send(new DeleteObjectCommand({ Bucket: CLUSTER_STORE_BUCKET, Key })))).toBe(403);
    for (const Prefix of [one.prefix, 'engines/', '']) {
      expect(
        await statusOf(two.s3.send(new ListObjectsV2Command({ Bucket: CLUSTER_STORE_BUCKET, Prefix }))),
        `listing ${Prefix}`,
      ).toBe(403);
    }
    // A prefix of its own that only starts like another account's is still its own.
    expect(
      await statusOf(
        two.s3.send(new ListObjectsV2Command({ Bucket: CLUSTER_STORE_BUCKET, Prefix: `engines/${TWO}/v1/` })),
      ),
    ).toBe(200);

    const listed = await one.s3.send(new ListObjectsV2Command({ Bucket: CLUSTER_STORE_BUCKET, Prefix: one.prefix }));
    expect(listed.Contents?.map((o) => o.Key)).toContain(Key);
    const read = await one.s3.send(new GetObjectCommand({ Bucket: CLUSTER_STORE_BUCKET, Key }));
    expect(await bodyText(read.Body)).toBe('lease');
  });

  it('refuses a key whose secret is not the one derived for it, and any other bucket', async () => {
    const { bucketOptions } = store.bucketFor(ONE);
    const endpoint = bucketOptions.find((o) => o.startsWith('aws_endpoint='))!.slice('aws_endpoint='.length);
    const forged = new S3Client({
      endpoint,
      region: 'auto',
      forcePathStyle: true,
      credentials: { accessKeyId: `ledge-cluster-${ONE}`, secretAccessKey: 'f'.repeat(64) },
    });
    expect(
      await statusOf(forged.send(new GetObjectCommand({ Bucket: CLUSTER_STORE_BUCKET, Key: `engines/${ONE}/x` }))),
    ).toBe(403);
    const { s3 } = clientFor(store, ONE);
    expect(await statusOf(s3.send(new GetObjectCommand({ Bucket: 'other', Key: `engines/${ONE}/x` })))).toBe(403);
  });
});
