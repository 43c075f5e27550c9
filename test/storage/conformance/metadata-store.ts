import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MetadataStore } from '../../../src/storage/index.ts';
import type { BucketRecord, ObjectRecord, PartRecord, UploadRecord } from '../../../src/storage/index.ts';
import { newId } from '../../../src/shared/ids.ts';

export interface MetadataStoreFixture {
  store: MetadataStore;
  /** The same records through another database handle (a second node on PostgreSQL). */
  secondStore?: MetadataStore;
  close(): Promise<void> | void;
}

export const bucketRecord = (accountId: string, name: string): BucketRecord => ({
  id: newId(),
  accountId,
  name,
  createdAt: Date.now(),
  location: 'ENAM',
  storageClass: 'Standard',
  jurisdiction: 'default',
});

export const objectRecord = (bucketId: string, key: string, blobId = newId()): ObjectRecord => ({
  bucketId,
  key,
  version: newId(),
  size: 3,
  etag: 'e'.repeat(32),
  uploaded: Date.now(),
  httpMetadata: { contentType: 'text/plain', cacheExpiry: 1_700_000_000_000 },
  customMetadata: { a: 'b' },
  checksums: { md5: 'e'.repeat(32) },
  storageClass: 'Standard',
  segments: [{ blobId, size: 3 }],
});

export const uploadRecord = (bucketId: string, key: string, createdAt = Date.now()): UploadRecord => ({
  uploadId: newId(),
  bucketId,
  key,
  createdAt,
  httpMetadata: {},
  customMetadata: {},
  storageClass: 'Standard',
});

export const partRecord = (uploadId: string, partNumber: number): PartRecord => ({
  uploadId,
  partNumber,
  blobId: newId(),
  size: 10,
  etag: 'a'.repeat(32),
  md5: 'b'.repeat(32),
  uploadedAt: Date.now(),
});

/**
 * The contract every MetadataStore implementation must meet (SQL on SQLite and PostgreSQL): run it
 * with `metadataStoreConformance('name', () => fixture)`.
 */
export function metadataStoreConformance(
  name: string,
  create: () => Promise<MetadataStoreFixture> | MetadataStoreFixture,
): void {
  describe(`MetadataStore conformance: ${name}`, () => {
    let fixture: MetadataStoreFixture;
    let store: MetadataStore;
    let bucket: BucketRecord;
    beforeEach(async () => {
      fixture = await create();
      store = fixture.store;
      bucket = bucketRecord('acct', 'bucket-one');
      expect(await store.createBucket(bucket)).toBe(true);
    });
    afterEach(async () => fixture.close());

    it('keeps bucket names unique per account only', async () => {
      expect(await store.createBucket(bucketRecord('acct', 'bucket-one'))).toBe(false);
      expect(await store.createBucket(bucketRecord('other', 'bucket-one'))).toBe(true);
      expect((await store.getBucket('acct', 'bucket-one'))?.id).toBe(bucket.id);
      expect(await store.getBucket('acct', 'missing')).toBeUndefined();
    });

    it('lists buckets by name in both directions, after a bound, filtered by substring', async () => {
      for (const n of ['b-2', 'a-1', 'c-3', 'x-b-9']) await store.createBucket(bucketRecord('acct', n));
      const names = async (q: Parameters<MetadataStore['listBuckets']>[1]) =>
        (await store.listBuckets('acct', q)).map((b) => b.name);
      expect(await names({ direction: 'asc', limit: 10 })).toEqual(['a-1', 'b-2', 'bucket-one', 'c-3', 'x-b-9']);
      expect(await names({ direction: 'desc', limit: 2 })).toEqual(['x-b-9', 'c-3']);
      expect(await names({ direction: 'asc', limit: 10, after: 'bucket-one' })).toEqual(['c-3', 'x-b-9']);
      expect(await names({ direction: 'desc', limit: 10, after: 'c-3' })).toEqual(['bucket-one', 'b-2', 'a-1']);
      expect(await names({ direction: 'asc', limit: 10, nameContains: '-b' })).toEqual(['x-b-9']);
    });

    it('updates the storage class and refuses to delete a non-empty bucket', async () => {
      expect((await store.updateBucket('acct', 'bucket-one', { storageClass: 'InfrequentAccess' }))?.storageClass).toBe(
        'InfrequentAccess',
      );
      expect(await store.updateBucket('acct', 'nope', { storageClass: 'Standard' })).toBeUndefined();
      await store.commitObject(objectRecord(bucket.id, 'k'));
      expect((await store.deleteBucket('acct', 'bucket-one')).status).toBe('not-empty');
      await store.deleteObjects(bucket.id, ['k']);
      const upload = uploadRecord(bucket.id, 'u');
      await store.createUpload(upload);
      await store.putPart(bucket.id, partRecord(upload.uploadId, 1));
      const deleted = await store.deleteBucket('acct', 'bucket-one');
      expect(deleted.status).toBe('deleted');
      expect(deleted.status === 'deleted' && deleted.discardedParts).toHaveLength(1);
      expect(await store.getUpload(bucket.id, upload.uploadId)).toBeUndefined();
      expect((await store.deleteBucket('acct', 'bucket-one')).status).toBe('missing');
    });

    it("sums a bucket's objects, payload and metadata bytes, and counts no other bucket", async () => {
      expect(await store.bucketUsage(bucket.id)).toEqual({ objectCount: 0, payloadSize: 0, metadataSize: 0 });
      await store.commitObject(objectRecord(bucket.id, 'a'));
      await store.commitObject({ ...objectRecord(bucket.id, 'bb'), size: 5_000_000_000 });
      const other = bucketRecord('acct', 'bucket-two');
      await store.createBucket(other);
      await store.commitObject(objectRecord(other.id, 'c'));
      const usage = await store.bucketUsage(bucket.id);
      expect(usage).toMatchObject({ objectCount: 2, payloadSize: 5_000_000_003 });
      // Keys plus the stored metadata: more than the keys alone, the same on every backend's encoding.
      expect(usage.metadataSize).toBeGreaterThan(3);
      expect((await store.bucketUsage(other.id)).objectCount).toBe(1);
    });

    it('round-trips objects with all their metadata and replaces atomically', async () => {
      const first = objectRecord(bucket.id, 'ключ');
      expect(await store.commitObject(first)).toEqual({ status: 'committed', replaced: undefined });
      expect(await store.getObject(bucket.id, 'ключ')).toEqual(first);
      const second = objectRecord(bucket.id, 'ключ');
      const result = await store.commitObject(second);
      expect(result).toEqual({ status: 'committed', replaced: first });
      expect(await store.getObject(bucket.id, 'ключ')).toEqual(second);
    });

    it('keeps an inline body with its record, replaces it, and leaves it out of listings', async () => {
      const inline: ObjectRecord = {
        ...objectRecord(bucket.id, 'small'),
        segments: [],
        inlineBody: Buffer.from('abc'),
      };
      await store.commitObject(inline);
      const got = await store.getObject(bucket.id, 'small');
      expect(Buffer.from(got!.inlineBody!).toString()).toBe('abc');
      expect(got).toMatchObject({ segments: [], size: 3, etag: inline.etag });
      const [listed] = await store.listObjects(bucket.id, { limit: 10 });
      expect(listed!.inlineBody).toBeUndefined();
      expect(listed).toMatchObject({ key: 'small', size: 3 });
      const blobBacked = objectRecord(bucket.id, 'small');
      const replaced = await store.commitObject(blobBacked);
      expect(replaced.status === 'committed' && Buffer.from(replaced.replaced!.inlineBody!).toString()).toBe('abc');
      expect(await store.getObject(bucket.id, 'small')).toEqual(blobBacked);
    });

    it('commits only when the precondition holds for the current object', async () => {
      const first = objectRecord(bucket.id, 'k');
      await store.commitObject(first);
      const refused = await store.commitObject(objectRecord(bucket.id, 'k'), (current) => current === undefined);
      expect(refused).toEqual({ status: 'precondition-failed', current: first });
      expect(await store.getObject(bucket.id, 'k')).toEqual(first);
      const ghost = { ...objectRecord(bucket.id, 'k'), bucketId: newId() };
      expect(await store.commitObject(ghost)).toEqual({ status: 'no-bucket' });
    });

    it('deletes the keys that exist and returns their records', async () => {
      await store.commitObject(objectRecord(bucket.id, 'a'));
      await store.commitObject(objectRecord(bucket.id, 'b'));
      const removed = await store.deleteObjects(bucket.id, ['a', 'missing', 'a']);
      expect(removed.map((o) => o.key)).toEqual(['a']);
      expect(await store.getObject(bucket.id, 'a')).toBeUndefined();
      expect(await store.getObject(bucket.id, 'b')).toBeDefined();
    });

    it('lists keys in UTF-8 byte order with prefix, startAfter and startAt bounds', async () => {
      const keys = ['a', 'a/1', 'a/2', 'b', 'é', 'z', '\u{1F600}', '\uFF5E'];
      for (const key of keys) await store.commitObject(objectRecord(bucket.id, key));
      const list = async (q: Parameters<MetadataStore['listObjects']>[1]) =>
        (await store.listObjects(bucket.id, q)).map((o) => o.key);
      const byteOrder = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      expect(await list({ limit: 100 })).toEqual(byteOrder);
      expect(await list({ limit: 100, prefix: 'a/' })).toEqual(['a/1', 'a/2']);
      expect(await list({ limit: 100, startAfter: 'a/1' })).toEqual(byteOrder.slice(byteOrder.indexOf('a/2')));
      expect(await list({ limit: 100, startAt: 'b' })).toEqual(byteOrder.slice(byteOrder.indexOf('b')));
      expect(await list({ limit: 2 })).toEqual(byteOrder.slice(0, 2));
    });

    it('stores parts only for live uploads and replaces a re-uploaded part', async () => {
      const upload = uploadRecord(bucket.id, 'm');
      expect(await store.createUpload(upload)).toBe(true);
      expect(await store.createUpload({ ...uploadRecord(newId(), 'm') })).toBe(false);
      const part = partRecord(upload.uploadId, 1);
      expect(await store.putPart(bucket.id, part)).toEqual({ status: 'stored', replaced: undefined });
      const again = partRecord(upload.uploadId, 1);
      expect(await store.putPart(bucket.id, again)).toEqual({ status: 'stored', replaced: part });
      expect(await store.putPart(bucket.id, partRecord(newId(), 1))).toEqual({ status: 'no-upload' });
      expect(await store.getUpload(newId(), upload.uploadId)).toBeUndefined();
    });

    it('completes an upload into an object atomically, or leaves it intact when the builder throws', async () => {
      const upload = uploadRecord(bucket.id, 'm');
      await store.createUpload(upload);
      const p1 = partRecord(upload.uploadId, 1);
      const p2 = partRecord(upload.uploadId, 2);
      await store.putPart(bucket.id, p1);
      await store.putPart(bucket.id, p2);
      await expect(
        store.completeUpload(bucket.id, upload.uploadId, () => {
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      expect(await store.getUpload(bucket.id, upload.uploadId)).toBeDefined();
      const result = await store.completeUpload(bucket.id, upload.uploadId, (u, parts) => {
        expect(parts.map((p) => p.partNumber)).toEqual([1, 2]);
        return { ...objectRecord(bucket.id, u.key), segments: [{ blobId: p1.blobId, size: 10 }] };
      });
      expect(result.status).toBe('completed');
      expect(result.status === 'completed' && result.unusedParts.map((p) => p.partNumber)).toEqual([2]);
      expect((await store.getObject(bucket.id, 'm'))?.segments).toEqual([{ blobId: p1.blobId, size: 10 }]);
      expect(await store.getUpload(bucket.id, upload.uploadId)).toBeUndefined();
      expect((await store.completeUpload(bucket.id, upload.uploadId, () => objectRecord(bucket.id, 'm'))).status).toBe(
        'no-upload',
      );
    });

    it('aborts uploads, finds old ones, and reports every referenced blob', async () => {
      const old = uploadRecord(bucket.id, 'old', Date.now() - 10_000);
      const fresh = uploadRecord(bucket.id, 'fresh');
      await store.createUpload(old);
      await store.createUpload(fresh);
      const part = partRecord(fresh.uploadId, 1);
      await store.putPart(bucket.id, part);
      const object = objectRecord(bucket.id, 'obj');
      await store.commitObject(object);
      expect((await store.uploadsCreatedBefore(Date.now() - 5_000, 10)).map((u) => u.uploadId)).toEqual([old.uploadId]);
      expect(await store.referencedBlobIds()).toEqual(new Set([part.blobId, object.segments[0]!.blobId]));
      expect(await store.abortUpload(bucket.id, fresh.uploadId)).toEqual([part]);
      expect(await store.abortUpload(bucket.id, fresh.uploadId)).toBeUndefined();
      expect(await store.referencedBlobIds()).toEqual(new Set([object.segments[0]!.blobId]));
    });

    it('stores lifecycle rules per bucket, replaced as a whole and dropped with the bucket', async () => {
      const rule = {
        id: 'r1',
        enabled: true,
        conditions: { prefix: 'logs/' },
        deleteObjectsTransition: { condition: { type: 'Age' as const, maxAge: 60 } },
      };
      expect(await store.getLifecycle(bucket.id)).toEqual([]);
      expect(await store.putLifecycle(bucket.id, [rule])).toBe(true);
      expect(await store.getLifecycle(bucket.id)).toEqual([rule]);
      expect((await store.bucketsWithLifecycle()).map((b) => [b.bucket.name, b.rules])).toEqual([
        [bucket.name, [rule]],
      ]);
      expect(await store.putLifecycle(bucket.id, [])).toBe(true);
      expect(await store.bucketsWithLifecycle()).toEqual([]);
      expect(await store.putLifecycle('no-such-bucket-id', [rule])).toBe(false);
      await store.putLifecycle(bucket.id, [rule]);
      await store.deleteBucket(bucket.accountId, bucket.name);
      expect(await store.bucketsWithLifecycle()).toEqual([]);
    });

    it('stores CORS rules per bucket: none, an empty set and a rule set differ; dropped with the bucket', async () => {
      const rule = {
        id: 'web',
        allowed: { origins: ['https://app.example'], methods: ['GET' as const, 'PUT' as const], headers: ['*'] },
        exposeHeaders: ['ETag'],
        maxAgeSeconds: 600,
      };
      const other = bucketRecord('acct', 'bucket-two');
      await store.createBucket(other);
      expect(await store.getCors(bucket.id)).toBeUndefined();
      expect(await store.putCors(bucket.id, [rule])).toBe(true);
      expect(await store.getCors(bucket.id)).toEqual([rule]);
      expect(await store.getCors(other.id)).toBeUndefined();
      expect(await (fixture.secondStore ?? store).getCors(bucket.id)).toEqual([rule]);
      expect(await store.putCors(bucket.id, [])).toBe(true);
      expect(await store.getCors(bucket.id)).toEqual([]);
      expect(await store.deleteCors(bucket.id)).toBe(true);
      expect(await store.deleteCors(bucket.id)).toBe(false);
      expect(await store.getCors(bucket.id)).toBeUndefined();
      expect(await store.putCors('no-such-bucket-id', [rule])).toBe(false);
      await store.putCors(other.id, [rule]);
      await store.deleteBucket(other.accountId, other.name);
      // A bucket made again under the same name starts without the old one's rules.
      const again = bucketRecord('acct', 'bucket-two');
      await store.createBucket(again);
      expect(await store.getCors(again.id)).toBeUndefined();
      expect(await store.getCors(other.id)).toBeUndefined();
    });

    it('deletes or re-classes an object only while its version is the one given', async () => {
      const first = objectRecord(bucket.id, 'k');
      await store.commitObject(first);
      const second = objectRecord(bucket.id, 'k');
      await store.commitObject(second);
      const stale = [{ key: 'k', version: first.version }];
      expect(await store.setObjectStorageClass(bucket.id, stale, 'InfrequentAccess')).toBe(0);
      expect(await store.deleteObjectVersions(bucket.id, stale)).toEqual([]);
      const current = [{ key: 'k', version: second.version }];
      expect(await store.setObjectStorageClass(bucket.id, current, 'InfrequentAccess')).toBe(1);
      expect((await store.getObject(bucket.id, 'k'))!.storageClass).toBe('InfrequentAccess');
      expect((await store.deleteObjectVersions(bucket.id, current)).map((o) => o.version)).toEqual([second.version]);
      expect(await store.getObject(bucket.id, 'k')).toBeUndefined();
    });

    it("finds a bucket's old uploads under a prefix", async () => {
      const old = uploadRecord(bucket.id, 'tmp/old', Date.now() - 10_000);
      await store.createUpload(old);
      await store.createUpload(uploadRecord(bucket.id, 'keep/old', Date.now() - 10_000));
      await store.createUpload(uploadRecord(bucket.id, 'tmp/fresh'));
      const found = await store.bucketUploadsCreatedBefore(bucket.id, 'tmp/', Date.now() - 5_000, 10);
      expect(found.map((u) => u.uploadId)).toEqual([old.uploadId]);
      expect(await store.bucketUploadsCreatedBefore(bucket.id, '', Date.now() - 5_000, 10)).toHaveLength(2);
    });

    it("lists an upload's parts in number order, and a bucket's uploads by key and id after a marker", async () => {
      const upload = uploadRecord(bucket.id, 'b/key');
      await store.createUpload(upload);
      for (const number of [3, 1, 2]) await store.putPart(bucket.id, partRecord(upload.uploadId, number));
      expect((await store.listParts(upload.uploadId)).map((p) => p.partNumber)).toEqual([1, 2, 3]);
      expect(await store.listParts(newId())).toEqual([]);

      const other = uploadRecord(bucket.id, 'b/key');
      await store.createUpload(other);
      await store.createUpload(uploadRecord(bucket.id, 'a/first'));
      await store.createUpload(uploadRecord(bucket.id, 'c/last'));
      const all = await store.listUploads(bucket.id, { prefix: '', limit: 10 });
      expect(all.map((u) => u.key)).toEqual(['a/first', 'b/key', 'b/key', 'c/last']);
      const ids = [upload.uploadId, other.uploadId].sort();
      expect(all.slice(1, 3).map((u) => u.uploadId)).toEqual(ids);
      const underB = await store.listUploads(bucket.id, { prefix: 'b/', limit: 10 });
      expect(underB.map((u) => u.uploadId)).toEqual(ids);
      const after = await store.listUploads(bucket.id, {
        prefix: '',
        after: { key: 'b/key', uploadId: ids[0]! },
        limit: 10,
      });
      expect(after.map((u) => u.key)).toEqual(['b/key', 'c/last']);
      expect(await store.listUploads(bucket.id, { prefix: '', limit: 1 })).toHaveLength(1);
    });
  });
}
