import { createHash } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import {
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../src/db/index.ts';
import { accountMigrations } from '../../src/accounts/index.ts';
import { newId } from '../../src/shared/ids.ts';
import {
  BlobNotFoundError,
  S3BlobStore,
  SqlMetadataStore,
  storageMigrations,
  type S3Settings,
} from '../../src/storage/index.ts';
import { createS3Client } from '../../src/storage/s3-client.ts';
import { PART_SIZE } from '../../src/storage/s3-upload.ts';
import { openTestDatabase } from '../helpers/backends.ts';
import { startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { blobStoreConformance } from './conformance/blob-store.ts';
import { engineConformance } from './conformance/engine.ts';
import { systemClock } from '../../src/shared/clock.ts';
import { poll } from '../helpers/wait.ts';

const MiB = 1024 * 1024;
const BUCKET = 'ledge-blobs';
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

let swift: S3Server;
let client: S3Client;
const stores: S3BlobStore[] = [];

beforeAll(async () => {
  swift = await startS3Server();
  client = createS3Client(settings(''));
  await new S3BlobStore(settings(''), client).ensureBucket();
});
afterAll(async () => {
  for (const store of stores) store.close();
  client?.destroy();
  await swift?.stop();
});

function settings(prefix: string): S3Settings {
  return {
    endpoint: swift.endpoint,
    region: swift.region,
    bucket: BUCKET,
    accessKeyId: swift.accessKeyId,
    secretAccessKey: swift.secretAccessKey,
    forcePathStyle: true,
    prefix,
  };
}

/** A store under a prefix of its own: each test sees only its own blobs in the shared bucket. */
function freshStore(): { blobs: S3BlobStore; prefix: string } {
  const prefix = `t-${newId().slice(0, 12)}/`;
  const blobs = new S3BlobStore(settings(prefix));
  stores.push(blobs);
  return { blobs, prefix };
}

/** `total` bytes of a pattern that differs at every offset of a part, in chunks as an upload arrives. */
function pattern(total: number): Buffer {
  const data = Buffer.alloc(total);
  for (let i = 0; i + 4 <= total; i += 4) data.writeUInt32LE(i, i);
  return data;
}
async function* chunked(data: Buffer, size = 64 * 1024, failAfter?: number) {
  for (let at = 0; at < data.length; at += size) {
    if (failAfter !== undefined && at >= failAfter) throw new Error('client went away');
    yield data.subarray(at, at + size);
  }
}

const pendingUploads = async (prefix: string) =>
  (await client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: prefix }))).Uploads ?? [];

blobStoreConformance('S3 on Swift', () => {
  const { blobs } = freshStore();
  return { blobs, close: () => undefined };
});

engineConformance('sqlite + S3 on Swift', async () => {
  const test = await openTestDatabase('sqlite');
  await applyMigrations(test.db, [...accountMigrations, ...storageMigrations], systemClock);
  return {
    store: new SqlMetadataStore(test.db, systemClock),
    blobs: freshStore().blobs,
    close: () => test.close(),
    listsEventually: true,
  };
});

describe('S3BlobStore on Swift', () => {
  it('streams a multipart-size blob in and reads it back, whole and across a part boundary', async () => {
    const { blobs, prefix } = freshStore();
    const data = pattern(20 * MiB + 123);
    const blob = await blobs.write(chunked(data, 100_000));
    expect(blob.size).toBe(data.length);
    // Three parts of 8 + 8 + 4 MiB: the service reports a multipart object's etag as `<md5>-<parts>`.
    const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: `${prefix}${blob.blobId}` }));
    expect(head.ETag).toMatch(/-3"$/);
    expect(head.ContentLength).toBe(data.length);
    expect(sha256(await buffer(await blobs.read(blob.blobId)))).toBe(sha256(data));
    const across = { offset: PART_SIZE - 1000, length: 5000 };
    const expected = data.subarray(across.offset, across.offset + across.length);
    expect((await buffer(await blobs.read(blob.blobId, across))).equals(expected)).toBe(true);
    expect((await blobs.readBytes(blob.blobId, across)).equals(expected)).toBe(true);
    expect(await pendingUploads(prefix)).toEqual([]);
  });

  it('writes a source of exactly one part size as one object, not a multipart upload', async () => {
    const { blobs, prefix } = freshStore();
    const data = pattern(PART_SIZE);
    const blob = await blobs.write(chunked(data));
    const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: `${prefix}${blob.blobId}` }));
    expect(head.ETag).toBe(`"${createHash('md5').update(data).digest('hex')}"`);
  });

  it('leaves no object and no pending upload when the source fails mid-multipart', async () => {
    const { blobs, prefix } = freshStore();
    // Fails after two parts went up.
    await expect(blobs.write(chunked(pattern(30 * MiB), 64 * 1024, 17 * MiB))).rejects.toThrow('client went away');
    const listed: string[] = [];
    for await (const blob of blobs.list()) listed.push(blob.blobId);
    expect(listed).toEqual([]);
    expect(await pendingUploads(prefix)).toEqual([]);
  });

  it('reads small spans in one buffer; unknown blobs fail with BlobNotFoundError', async () => {
    const { blobs } = freshStore();
    const blob = await blobs.write(chunked(Buffer.from('hello world')));
    expect((await blobs.readBytes(blob.blobId, { offset: 6, length: 5 })).toString()).toBe('world');
    expect((await blobs.readBytes(blob.blobId, { offset: 6, length: 0 })).length).toBe(0);
    await expect(blobs.readBytes(newId(), { offset: 0, length: 1 })).rejects.toBeInstanceOf(BlobNotFoundError);
    await expect(blobs.read('not-an-id')).rejects.toBeInstanceOf(BlobNotFoundError);
  });

  it('lists past a page of 1000 keys and deletes in batches of 1000 (with the Content-MD5 Swift requires)', async () => {
    const { blobs } = freshStore();
    const written = new Set<string>();
    for (let batch = 0; batch < 21; batch++) {
      const blobsOfBatch = await Promise.all(Array.from({ length: 50 }, () => blobs.write(chunked(Buffer.from('x')))));
      for (const blob of blobsOfBatch) written.add(blob.blobId);
    }
    // Swift lists eventually: a listing is read again, within a bound, until it has the expected size.
    const listed = async (size: number) => {
      let found = new Set<string>();
      const read = async () => {
        found = new Set<string>();
        for await (const blob of blobs.list()) found.add(blob.blobId);
        return found.size === size;
      };
      await poll(read, { timeoutMs: 10_000, everyMs: 100 });
      return found;
    };
    expect(await listed(written.size)).toEqual(written);
    // 1050 ids and one that names nothing: two DeleteObjects requests, the unknown id ignored.
    await blobs.delete([...written, newId()]);
    expect(await listed(0)).toEqual(new Set());
  });

  it('removeTemporaryBefore aborts stale multipart uploads of blobs, and only those', async () => {
    const { blobs, prefix } = freshStore();
    const start = async (key: string) => {
      const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }));
      await client.send(
        new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: 1, Body: pattern(MiB) }),
      );
    };
    await start(`${prefix}${newId()}`);
    // Not a blob key: something else sharing the bucket, never ours to abort.
    await start(`${prefix}notes/upload`);
    // Initiated just now: not before a time a minute ago.
    expect(await blobs.removeTemporaryBefore(Date.now() - 60_000)).toBe(0);
    expect(await pendingUploads(prefix)).toHaveLength(2);
    expect(await blobs.removeTemporaryBefore(Date.now() + 60_000)).toBe(1);
    expect((await pendingUploads(prefix)).map((upload) => upload.Key)).toEqual([`${prefix}notes/upload`]);
  });
});
