import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MetadataStore } from '../../../src/storage/index.ts';
import type { BucketRecord, ObjectRecord } from '../../../src/storage/index.ts';
import { bucketRecord, objectRecord, partRecord, uploadRecord, type MetadataStoreFixture } from './metadata-store.ts';

/** How many races each case runs: one lucky interleaving proves nothing. */
const ROUNDS = 8;

/**
 * Writers racing for one precondition through two database handles (two nodes on PostgreSQL, where
 * transactions run READ COMMITTED side by side): exactly one wins, nothing is lost or reported twice,
 * and no race surfaces as an error.
 */
export function metadataStoreRaces(
  name: string,
  create: () => Promise<MetadataStoreFixture> | MetadataStoreFixture,
): void {
  describe(`MetadataStore races: ${name}`, () => {
    let fixture: MetadataStoreFixture;
    let a: MetadataStore;
    let b: MetadataStore;
    let bucket: BucketRecord;
    beforeEach(async () => {
      fixture = await create();
      a = fixture.store;
      b = fixture.secondStore ?? fixture.store;
      bucket = bucketRecord('acct', 'races');
      expect(await a.createBucket(bucket)).toBe(true);
    });
    afterEach(async () => fixture.close());

    it('lets one of two creators of a key win when both require that it does not exist', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const key = `new-${round}`;
        const results = await Promise.all(
          [a, b].map((store) => store.commitObject(objectRecord(bucket.id, key), (current) => current === undefined)),
        );
        expect(results.map((r) => r.status).sort()).toEqual(['committed', 'precondition-failed']);
      }
    });

    it('reports every overwritten version as replaced exactly once when writers race on one key', async () => {
      const writes = Array.from({ length: 6 }, (_, i) => objectRecord(bucket.id, 'hot', `blob-${i}`));
      const results = await Promise.all(writes.map((object, i) => (i % 2 ? b : a).commitObject(object)));
      const replaced = results.map((r) => (r.status === 'committed' ? r.replaced?.version : 'failed'));
      expect(replaced).not.toContain('failed');
      const final = (await a.getObject(bucket.id, 'hot'))!;
      // A chain: each version but the last is replaced once, the first write replaced nothing.
      expect(replaced.filter((v) => v === undefined)).toHaveLength(1);
      const versions = new Set(writes.map((w) => w.version));
      const replacedVersions = replaced.filter((v): v is string => v !== undefined);
      expect(new Set(replacedVersions).size).toBe(replacedVersions.length);
      expect(new Set([...replacedVersions, final.version])).toEqual(versions);
    });

    it('completes an upload once when two completions race', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const upload = uploadRecord(bucket.id, `multi-${round}`);
        await a.createUpload(upload);
        const part = partRecord(upload.uploadId, 1);
        await a.putPart(bucket.id, part);
        const build = (): ObjectRecord => ({
          ...objectRecord(bucket.id, upload.key),
          segments: [{ blobId: part.blobId, size: part.size }],
        });
        const results = await Promise.all(
          [a, b].map((store) => store.completeUpload(bucket.id, upload.uploadId, build)),
        );
        expect(results.map((r) => r.status).sort()).toEqual(['completed', 'no-upload']);
      }
    });

    it('never loses a part stored while the upload completes', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const upload = uploadRecord(bucket.id, `late-${round}`);
        await a.createUpload(upload);
        await a.putPart(bucket.id, partRecord(upload.uploadId, 1));
        const late = partRecord(upload.uploadId, 2);
        const [stored, completed] = await Promise.all([
          b.putPart(bucket.id, late),
          a.completeUpload(bucket.id, upload.uploadId, (u, parts) => ({
            ...objectRecord(bucket.id, u.key),
            segments: parts.slice(0, 1).map((p) => ({ blobId: p.blobId, size: p.size })),
          })),
        ]);
        expect(completed.status).toBe('completed');
        if (stored.status === 'stored' && completed.status === 'completed') {
          // Stored before the completion: the completion saw it (here as unused, so its blob is collected).
          expect(completed.unusedParts.map((p) => p.blobId)).toContain(late.blobId);
        } else {
          expect(stored.status).toBe('no-upload');
        }
      }
    });

    it('never deletes a bucket an object is being written into', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const target = bucketRecord('acct', `doomed-${round}`);
        await a.createBucket(target);
        const [committed, deleted] = await Promise.all([
          b.commitObject(objectRecord(target.id, 'k')),
          a.deleteBucket('acct', target.name),
        ]);
        if (committed.status === 'committed') expect(deleted.status).toBe('not-empty');
        else expect([committed.status, deleted.status]).toEqual(['no-bucket', 'deleted']);
      }
    });

    it('deletes each key once when two batches name the same keys in different orders', async () => {
      const keys = Array.from({ length: 20 }, (_, i) => `batch/${String(i).padStart(2, '0')}`);
      for (const key of keys) await a.commitObject(objectRecord(bucket.id, key));
      const [first, second] = await Promise.all([
        a.deleteObjects(bucket.id, keys),
        b.deleteObjects(bucket.id, [...keys].reverse()),
      ]);
      expect([...first, ...second].map((o) => o.key).sort()).toEqual(keys);
      expect(await a.listObjects(bucket.id, { limit: 100 })).toEqual([]);
    });
  });
}
