import { createHash } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  bodyStream,
  StorageService,
  type BlobStore,
  type BucketRecord,
  type MetadataStore,
} from '../../../src/storage/index.ts';
import type { LedgeError } from '../../../src/shared/errors.ts';
import { SMALL_BODY_BYTES as INLINE_BODY_LIMIT } from '../../../src/shared/http-listener/small-body.ts';
import { systemClock } from '../../../src/shared/clock.ts';
import { poll } from '../../helpers/wait.ts';

export interface EngineFixture {
  store: MetadataStore;
  blobs: BlobStore;
  close(): Promise<void> | void;
  /**
   * The blob store lists eventually (Swift updates a container's listing after the write or delete it
   * acknowledged, later under load): a blob count is read again until it is the expected one, within a bound.
   */
  listsEventually?: boolean;
}

/** How long an eventually-listing store may take to list what it acknowledged. */
const LISTING_SETTLE_MS = 10_000;

const MiB = 1024 * 1024;
const md5 = (data: Buffer | string) => createHash('md5').update(data).digest('hex');
async function* bytes(...parts: (string | Buffer)[]) {
  for (const part of parts) yield Buffer.from(part);
}

/** Expects a LedgeError with this v4 code (and status). */
async function expectCode(promise: Promise<unknown>, code: number, status?: number): Promise<void> {
  const error = (await promise.then(
    () => undefined,
    (e: unknown) => e,
  )) as LedgeError | undefined;
  expect(error, `expected v4 code ${code}`).toBeDefined();
  expect(error!.code).toBe(code);
  if (status !== undefined) expect(error!.status).toBe(status);
}

/**
 * R2 semantics of the engine over any MetadataStore + BlobStore pair. Also proves that refused writes
 * leave no record and no blob behind.
 */
export function engineConformance(name: string, create: () => Promise<EngineFixture> | EngineFixture): void {
  describe(`storage engine: ${name}`, () => {
    let fixture: EngineFixture;
    let storage: StorageService;
    let bucket: BucketRecord;
    const blobCount = async () => {
      let n = 0;
      for await (const _ of fixture.blobs.list()) n++;
      return n;
    };
    /** Expects `expected` blobs in the store (on an eventually-listing store, once its listing settles). */
    const expectBlobCount = async (expected: number) => {
      let count = await blobCount();
      if (count !== expected && fixture.listsEventually) {
        await poll(async () => (count = await blobCount()) === expected, {
          timeoutMs: LISTING_SETTLE_MS,
          everyMs: 100,
        });
      }
      expect(count, 'blobs in the store').toBe(expected);
    };
    const keys = async () => (await storage.list(bucket, {})).objects.map((o) => o.key);

    beforeEach(async () => {
      fixture = await create();
      storage = new StorageService(fixture.store, fixture.blobs, { garbageGraceMs: 0, clock: systemClock });
      bucket = await storage.buckets.create('acct', { name: 'engine' });
    });
    afterEach(async () => {
      await storage.stop();
      await fixture.close();
    });

    it('puts with an md5 etag and checksums, gets and heads it back', async () => {
      const object = await storage.objects.put(bucket, 'a/b.txt', bytes('hello ', 'world'), {
        httpMetadata: { contentType: 'text/plain' },
        customMetadata: { x: 'y' },
        digests: { sha256: createHash('sha256').update('hello world').digest('hex') },
      });
      expect(object).toMatchObject({ key: 'a/b.txt', size: 11, etag: md5('hello world'), storageClass: 'Standard' });
      expect(object!.checksums.md5).toBe(md5('hello world'));
      expect(object!.checksums.sha256).toBeDefined();
      const got = await storage.objects.get(bucket, 'a/b.txt');
      expect(got?.status).toBe('found');
      if (got?.status === 'found') expect((await buffer(bodyStream(got.body))).toString()).toBe('hello world');
      expect(await storage.objects.head(bucket, 'a/b.txt')).toEqual(object);
    });

    it('replaces an object and frees the old blob', async () => {
      await storage.objects.put(bucket, 'k', bytes('one'));
      await storage.objects.put(bucket, 'k', bytes('two'));
      await storage.flushGarbage();
      await expectBlobCount(1);
      await storage.objects.delete(bucket, ['k']);
      await storage.flushGarbage();
      await expectBlobCount(0);
    });

    it('applies put preconditions (null, nothing stored)', async () => {
      const first = await storage.objects.put(bucket, 'k', bytes('one'));
      expect(
        await storage.objects.put(bucket, 'k', bytes('two'), { onlyIf: { etagDoesNotMatch: [{ type: 'wildcard' }] } }),
      ).toBeNull();
      expect(
        await storage.objects.put(bucket, 'new', bytes('x'), {
          onlyIf: { etagMatches: [{ type: 'strong', value: first!.etag }] },
        }),
      ).toBeNull();
      const ok = await storage.objects.put(bucket, 'k', bytes('three'), {
        onlyIf: { etagMatches: [{ type: 'strong', value: first!.etag }] },
      });
      expect(ok?.etag).toBe(md5('three'));
      await storage.flushGarbage();
      await expectBlobCount(1);
    });

    it('answers a failed get precondition with the metadata only', async () => {
      const object = await storage.objects.put(bucket, 'k', bytes('v'));
      const result = await storage.objects.get(bucket, 'k', {
        onlyIf: { etagDoesNotMatch: [{ type: 'strong', value: object!.etag }] },
      });
      expect(result).toEqual({ status: 'precondition-failed', object });
    });

    it('reads ranges across the segments of a multipart object', async () => {
      const upload = await storage.multipart.create(bucket, 'mp');
      const one = Buffer.alloc(5 * MiB, 1);
      const two = Buffer.alloc(5 * MiB, 2);
      const three = Buffer.from('tail');
      const parts = [
        await storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 1, bytes(one)),
        await storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 2, bytes(two)),
        await storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 3, bytes(three)),
      ];
      const object = await storage.multipart.complete(bucket, 'mp', upload.uploadId, parts);
      const expectedEtag = `${md5(Buffer.concat([one, two, three].map((p) => Buffer.from(md5(p), 'hex'))))}-3`;
      expect(object).toMatchObject({ size: 10 * MiB + 4, etag: expectedEtag, checksums: {} });
      const got = await storage.objects.get(bucket, 'mp', { range: { offset: 5 * MiB - 1, length: 5 * MiB + 3 } });
      if (got?.status !== 'found') throw new Error('not found');
      const slice = await buffer(bodyStream(got.body));
      expect(slice.length).toBe(5 * MiB + 3);
      // Bytes 5 MiB - 1 .. 10 MiB + 1: the end of part one, all of part two, 'ta' of the tail.
      expect([slice[0], slice[1], slice[5 * MiB], slice[5 * MiB + 1], slice[5 * MiB + 2]]).toEqual([1, 2, 2, 116, 97]);
    });

    it('requires non-final parts of at least 5 MiB and of equal size', async () => {
      const upload = await storage.multipart.create(bucket, 'mp');
      const a = await storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 1, bytes(Buffer.alloc(5 * MiB)));
      const b = await storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 2, bytes(Buffer.alloc(5 * MiB + 1)));
      const c = await storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 3, bytes('x'));
      await expectCode(storage.multipart.complete(bucket, 'mp', upload.uploadId, [a, b, c]), 10048, 400);
      const small = await storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 4, bytes('small'));
      await expectCode(storage.multipart.complete(bucket, 'mp', upload.uploadId, [small, c]), 10011, 400);
      expect(await storage.objects.head(bucket, 'mp')).toBeUndefined();
      expect((await storage.multipart.complete(bucket, 'mp', upload.uploadId, [a, c])).size).toBe(5 * MiB + 1);
    });

    it('checks listed part sizes in the order given, then equal sizes in part order (10011, 10048)', async () => {
      const upload = await storage.multipart.create(bucket, 'mp');
      const big = await storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 1, bytes(Buffer.alloc(5 * MiB)));
      const tail = await storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 2, bytes('tail'));
      const larger = await storage.multipart.uploadPart(
        bucket,
        'mp',
        upload.uploadId,
        3,
        bytes(Buffer.alloc(5 * MiB + 1)),
      );
      // Sizes are checked as listed: the tail listed first is a too-small non-final part.
      await expectCode(storage.multipart.complete(bucket, 'mp', upload.uploadId, [tail, big]), 10011, 400);
      await expectCode(storage.multipart.complete(bucket, 'mp', upload.uploadId, [big, larger]), 10048, 400);
      await expectCode(storage.multipart.complete(bucket, 'mp', upload.uploadId, [big, big]), 10001, 400);
      const object = await storage.multipart.complete(bucket, 'mp', upload.uploadId, [big, tail]);
      expect(object.size).toBe(5 * MiB + 4);
      await expectCode(storage.multipart.complete(bucket, 'mp', upload.uploadId, [big, tail]), 10024, 404);
      await expectCode(storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 4, bytes('x')), 10024, 404);
      await storage.multipart.abort(bucket, 'mp', upload.uploadId);
      expect((await storage.objects.head(bucket, 'mp'))?.etag).toBe(object.etag);
    });

    it('completes an empty part list into an empty object; aborting twice succeeds (as R2)', async () => {
      const upload = await storage.multipart.create(bucket, 'mp');
      const object = await storage.multipart.complete(bucket, 'mp', upload.uploadId, []);
      expect(object).toMatchObject({ size: 0, etag: `${md5('')}-0` });
      const got = await storage.objects.get(bucket, 'mp');
      if (got?.status !== 'found') throw new Error('missing');
      expect((await buffer(bodyStream(got.body))).length).toBe(0);
      const aborted = await storage.multipart.create(bucket, 'ab');
      const part = await storage.multipart.uploadPart(bucket, 'ab', aborted.uploadId, 1, bytes('x'));
      await storage.multipart.abort(bucket, 'ab', aborted.uploadId);
      await storage.multipart.abort(bucket, 'ab', aborted.uploadId);
      await expectCode(storage.multipart.complete(bucket, 'ab', aborted.uploadId, [part]), 10024, 404);
      await storage.flushGarbage();
      await expectBlobCount(0);
    });

    it("gives each upload of a part a new etag, even of the same bytes; a superseded part's etag fails (10025)", async () => {
      // As R2 and Miniflare's R2 tests: part etags are per upload, not the md5 of the bytes.
      const upload = await storage.multipart.create(bucket, 'mp');
      const first = await storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 1, bytes('same'));
      const again = await storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 1, bytes('same'));
      expect(again.etag).not.toBe(first.etag);
      expect(again.etag).not.toBe(md5('same'));
      const other = await storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 2, bytes('same'));
      expect(other.etag).not.toBe(again.etag);
      await expectCode(storage.multipart.complete(bucket, 'mp', upload.uploadId, [first]), 10025, 400);
      const object = await storage.multipart.complete(bucket, 'mp', upload.uploadId, [again]);
      // The object's etag still comes from the parts' md5s, as on R2.
      expect(object).toMatchObject({
        size: 4,
        etag: `${createHash('md5')
          .update(Buffer.from(md5('same'), 'hex'))
          .digest('hex')}-1`,
      });
    });

    it('refuses a wrong part etag (10025) and stores nothing', async () => {
      const upload = await storage.multipart.create(bucket, 'mp');
      await storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 1, bytes('x'));
      await expectCode(
        storage.multipart.complete(bucket, 'mp', upload.uploadId, [{ partNumber: 1, etag: md5('y') }]),
        10025,
        400,
      );
      await expectCode(
        storage.multipart.complete(bucket, 'mp', upload.uploadId, [{ partNumber: 2, etag: md5('x') }]),
        10025,
        400,
      );
      expect(await keys()).toEqual([]);
    });

    it('refuses unknown uploads (10024; 10001 to complete or abort, as R2), also under another key, and bad part numbers', async () => {
      await expectCode(storage.multipart.uploadPart(bucket, 'mp', 'f'.repeat(32), 1, bytes('x')), 10024, 404);
      const upload = await storage.multipart.create(bucket, 'mp');
      await expectCode(storage.multipart.uploadPart(bucket, 'other-key', upload.uploadId, 1, bytes('x')), 10024, 404);
      await expectCode(storage.multipart.abort(bucket, 'mp', 'f'.repeat(32)), 10001, 404);
      await expectCode(storage.multipart.complete(bucket, 'mp', 'f'.repeat(32), []), 10001, 404);
      await expectCode(storage.multipart.abort(bucket, 'other-key', upload.uploadId), 10001, 404);
      await expectCode(storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 10_001, bytes('x')), 10040, 400);
      await expectCode(storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 0, bytes('x')), 10040, 400);
      await expectBlobCount(0);
    });

    it('expires uploads older than 7 days with their parts', async () => {
      const upload = await storage.multipart.create(bucket, 'mp');
      await storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 1, bytes('x'));
      expect(await storage.expireUploads(Date.now() + 6 * 24 * 3600_000)).toBe(0);
      expect(await storage.expireUploads(Date.now() + 7 * 24 * 3600_000 + 1000)).toBe(1);
      await storage.flushGarbage();
      await expectBlobCount(0);
      await expectCode(storage.multipart.uploadPart(bucket, 'mp', upload.uploadId, 2, bytes('x')), 10024);
      // A finished upload is remembered for the TTL (aborting it again succeeds), then forgotten (10001).
      const aborted = await storage.multipart.create(bucket, 'ab');
      await storage.multipart.abort(bucket, 'ab', aborted.uploadId);
      await storage.expireUploads(Date.now() + 6 * 24 * 3600_000);
      await storage.multipart.abort(bucket, 'ab', aborted.uploadId);
      await storage.expireUploads(Date.now() + 7 * 24 * 3600_000 + 1000);
      await expectCode(storage.multipart.abort(bucket, 'ab', aborted.uploadId), 10001);
    });

    it('refuses keys over 1024 bytes (10020) and stores nothing', async () => {
      await expectCode(storage.objects.put(bucket, 'k'.repeat(1025), bytes('x')), 10020, 400);
      expect((await storage.objects.put(bucket, 'é'.repeat(512), bytes('x')))?.key).toHaveLength(512);
      expect(await keys()).toEqual(['é'.repeat(512)]);
    });

    it('stores the empty key like any other (as R2)', async () => {
      expect((await storage.objects.put(bucket, '', bytes('x')))?.key).toBe('');
      expect((await storage.objects.head(bucket, ''))?.size).toBe(1);
      expect(await keys()).toEqual(['']);
      await storage.objects.delete(bucket, ['']);
      expect(await keys()).toEqual([]);
    });

    it('refuses custom metadata over 8192 bytes (10012) and stores nothing', async () => {
      await expectCode(
        storage.objects.put(bucket, 'k', bytes('x'), { customMetadata: { k: 'v'.repeat(8192) } }),
        10012,
        400,
      );
      expect(
        (await storage.objects.put(bucket, 'k', bytes('x'), { customMetadata: { k: 'v'.repeat(8191) } }))?.key,
      ).toBe('k');
      await expectCode(storage.multipart.create(bucket, 'm', { customMetadata: { k: 'v'.repeat(9000) } }), 10012, 400);
    });

    it('refuses bad digests (10037) and keeps neither record nor blob', async () => {
      await expectCode(
        storage.objects.put(bucket, 'k', bytes('payload'), { digests: { md5: md5('other') } }),
        10037,
        400,
      );
      const sha1 = storage.objects.put(bucket, 'k', bytes('payload'), { digests: { sha1: 'A'.repeat(40) } });
      await expect(sha1).rejects.toThrow(
        [
          'The SHA-1 checksum you specified did not match what we received.',
          `You provided a SHA-1 checksum with value: ${'a'.repeat(40)}`,
          `Actual SHA-1 was: ${createHash('sha1').update('payload').digest('hex')}`,
        ].join('\n'),
      );
      await expectCode(storage.objects.put(bucket, 'k', bytes('payload'), { digests: { sha256: 'zz' } }), 10014, 400);
      expect(await keys()).toEqual([]);
      await expectBlobCount(0);
    });

    it('refuses bodies longer or shorter than declared and stores nothing', async () => {
      await expectCode(storage.objects.put(bucket, 'k', bytes('12345'), { size: 3 }), 10013);
      await expectCode(storage.objects.put(bucket, 'k', bytes('1'), { size: 3 }), 10013);
      await expectCode(storage.objects.put(bucket, 'k', bytes('1'), { size: 6 * 1024 * MiB }), 100100, 400);
      expect(await keys()).toEqual([]);
      await expectBlobCount(0);
    });

    it('refuses invalid ranges (10039)', async () => {
      await storage.objects.put(bucket, 'k', bytes('0123456789'));
      await expectCode(storage.objects.get(bucket, 'k', { range: { offset: 11 } }), 10039, 416);
      await expectCode(storage.objects.get(bucket, 'k', { range: { offset: 1, length: 0 } }), 10039, 416);
      const header = await storage.objects.get(bucket, 'k', { range: { header: 'bytes=20-30' } });
      if (header?.status !== 'found') throw new Error('missing');
      expect(header.range).toBeUndefined();
      expect((await buffer(bodyStream(header.body))).toString()).toBe('0123456789');
    });

    it('refuses invalid list limits (10022)', async () => {
      for (const limit of [0, -1, 1001, 1.5]) await expectCode(storage.list(bucket, { limit }), 10022, 400);
    });

    it('pages through runs of folders and objects with the delimiter, every entry once and in order', async () => {
      // Runs of folders (each read past with a short read) between runs of plain objects, paged by 7.
      const keys: string[] = [];
      for (let i = 0; i < 40; i++) {
        const name = `m/${String(i).padStart(2, '0')}`;
        if (i % 10 < 6) keys.push(`${name}/x`, `${name}/y`);
        else keys.push(name);
      }
      for (const key of keys) await storage.objects.put(bucket, key, bytes(key));
      const expected = [
        ...new Set(keys.map((k) => (k.split('/').length > 2 ? `${k.split('/').slice(0, 2).join('/')}/` : k))),
      ];
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 20; page++) {
        const result = await storage.list(bucket, { prefix: 'm/', delimiter: '/', limit: 7, cursor });
        seen.push(...[...result.delimitedPrefixes, ...result.objects.map((o) => o.key)].sort());
        expect(result.delimitedPrefixes.length + result.objects.length).toBeLessThanOrEqual(7);
        if (!result.truncated) break;
        cursor = result.cursor;
      }
      expect(seen).toEqual(expected);
    });

    it('lists with delimiter, cursor and startAfter', async () => {
      for (const key of ['p/a/1', 'p/a/2', 'p/b', 'p/c/1', 'q']) await storage.objects.put(bucket, key, bytes(key));
      const first = await storage.list(bucket, { prefix: 'p/', delimiter: '/', limit: 2 });
      expect(first).toMatchObject({ delimitedPrefixes: ['p/a/'], truncated: true });
      expect(first.objects.map((o) => o.key)).toEqual(['p/b']);
      const second = await storage.list(bucket, { prefix: 'p/', delimiter: '/', limit: 2, cursor: first.cursor });
      expect(second).toMatchObject({ delimitedPrefixes: ['p/c/'], truncated: false, cursor: undefined, objects: [] });
      expect((await storage.list(bucket, { startAfter: 'p/b' })).objects.map((o) => o.key)).toEqual(['p/c/1', 'q']);
      // A cursor that is not ours is read as R2's simulator reads cursors: base64 of the key to list after.
      const foreign = Buffer.from('p/b').toString('base64');
      expect((await storage.list(bucket, { cursor: foreign })).objects.map((o) => o.key)).toEqual(['p/c/1', 'q']);
      expect((await storage.list(bucket, { cursor: 'not a cursor!' })).objects).toEqual([]);
      // The later of cursor and startAfter wins.
      expect((await storage.list(bucket, { cursor: foreign, startAfter: 'p/c/1' })).objects.map((o) => o.key)).toEqual([
        'q',
      ]);
    });

    it('never mixes bodies of concurrent puts to one key', async () => {
      const bodies = Array.from({ length: 8 }, (_, i) => Buffer.alloc(256 * 1024 + i, 65 + i));
      async function* slow(body: Buffer) {
        for (let at = 0; at < body.length; at += 16 * 1024) {
          yield body.subarray(at, at + 16 * 1024);
          await new Promise((r) => setImmediate(r));
        }
      }
      await Promise.all(bodies.map((body) => storage.objects.put(bucket, 'contended', slow(body))));
      const got = await storage.objects.get(bucket, 'contended');
      if (got?.status !== 'found') throw new Error('missing');
      const body = await buffer(bodyStream(got.body));
      expect(bodies.some((candidate) => candidate.equals(body))).toBe(true);
      expect(got.object.etag).toBe(md5(body));
      await storage.flushGarbage();
      await expectBlobCount(1);
    });

    it('deletes buckets only when empty (10008), and the name can be reused', async () => {
      // A finished upload's record goes with its bucket.
      const finished = await storage.multipart.create(bucket, 'mp');
      await storage.multipart.abort(bucket, 'mp', finished.uploadId);
      await storage.objects.put(bucket, 'k', bytes('x'));
      await expectCode(storage.buckets.delete('acct', 'engine'), 10008, 409);
      await storage.objects.delete(bucket, ['k']);
      await storage.buckets.delete('acct', 'engine');
      await expectCode(storage.buckets.require('acct', 'engine'), 10006, 404);
      await expectCode(storage.objects.put(bucket, 'k', bytes('x')), 10006, 404);
      await expectBlobCount(0);
      expect((await storage.buckets.create('acct', { name: 'engine' })).name).toBe('engine');
    });

    it('keeps bodies declared up to INLINE_BODY_LIMIT with the record: no blob, same bytes, ranges and semantics', async () => {
      const small = Buffer.alloc(INLINE_BODY_LIMIT, 7);
      small.write('head', 0);
      const object = await storage.objects.put(bucket, 'small', bytes(small.subarray(0, 100), small.subarray(100)), {
        size: small.length,
        digests: { sha1: createHash('sha1').update(small).digest('hex') },
      });
      expect(object).toMatchObject({ size: INLINE_BODY_LIMIT, etag: md5(small), segments: [] });
      await expectBlobCount(0);
      const got = await storage.objects.get(bucket, 'small');
      if (got?.status !== 'found') throw new Error('missing');
      expect((await buffer(bodyStream(got.body))).equals(small)).toBe(true);
      const read = await storage.objects.read(bucket, 'small', { range: { offset: 2, length: 3 }, bufferUpTo: 0 });
      if (read?.status !== 'found' || read.body.kind !== 'bytes') throw new Error('expected a buffered range');
      expect(read.body.bytes.toString()).toBe('ad\u0007');
      const suffix = await storage.objects.get(bucket, 'small', { range: { suffix: 2 } });
      if (suffix?.status !== 'found') throw new Error('missing');
      expect([...(await buffer(bodyStream(suffix.body)))]).toEqual([7, 7]);
      // One byte more goes to a blob; an empty body is inline too.
      const large = await storage.objects.put(bucket, 'large', bytes(Buffer.alloc(INLINE_BODY_LIMIT + 1)), {
        size: INLINE_BODY_LIMIT + 1,
      });
      expect(large!.segments).toHaveLength(1);
      await expectBlobCount(1);
      const empty = await storage.objects.put(bucket, 'empty', bytes(), { size: 0 });
      expect(empty).toMatchObject({ size: 0, etag: md5(''), segments: [] });
      const gotEmpty = await storage.objects.get(bucket, 'empty');
      if (gotEmpty?.status !== 'found') throw new Error('missing');
      expect((await buffer(bodyStream(gotEmpty.body))).length).toBe(0);
      // Listings carry metadata only.
      const listed = (await storage.list(bucket, {})).objects;
      expect(listed.map((o) => o.key)).toEqual(['empty', 'large', 'small']);
      expect(listed.every((o) => o.inlineBody === undefined)).toBe(true);
    });

    it('replaces inline bodies and blobs by each other, freeing exactly the replaced blob', async () => {
      await storage.objects.put(bucket, 'k', bytes('blob-backed'));
      await expectBlobCount(1);
      await storage.objects.put(bucket, 'k', bytes('inline'), { size: 6 });
      await storage.flushGarbage();
      await expectBlobCount(0);
      await storage.objects.put(bucket, 'k', bytes('blob again'));
      await storage.flushGarbage();
      await expectBlobCount(1);
      const got = await storage.objects.get(bucket, 'k');
      if (got?.status !== 'found') throw new Error('missing');
      expect((await buffer(bodyStream(got.body))).toString()).toBe('blob again');
      await storage.objects.put(bucket, 'k', bytes('x'), { size: 1 });
      await storage.objects.delete(bucket, ['k']);
      await storage.flushGarbage();
      await expectBlobCount(0);
      expect(await keys()).toEqual([]);
    });

    it('refuses an inline body longer than declared as soon as it passes the size, storing nothing', async () => {
      let pulled = 0;
      async function* endless() {
        for (;;) {
          pulled++;
          yield Buffer.alloc(1024);
        }
      }
      await expectCode(storage.objects.put(bucket, 'k', endless(), { size: 1024 }), 10013, 400);
      expect(pulled).toBe(2);
      await expectCode(
        storage.objects.put(bucket, 'k', bytes('payload'), { size: 7, digests: { md5: md5('other') } }),
        10037,
        400,
      );
      const first = await storage.objects.put(bucket, 'k', bytes('one'), { size: 3 });
      expect(
        await storage.objects.put(bucket, 'k', bytes('two'), {
          size: 3,
          onlyIf: { etagMatches: [{ type: 'strong', value: md5('other') }] },
        }),
      ).toBeNull();
      expect(await storage.objects.head(bucket, 'k')).toMatchObject({ etag: first!.etag });
      expect(await keys()).toEqual(['k']);
    });

    it('sees bucket changes at once through its lookups: a new default storage class, a re-created bucket', async () => {
      const looked = await storage.buckets.require('acct', 'engine');
      await storage.buckets.update('acct', 'engine', { storageClass: 'InfrequentAccess' });
      const updated = await storage.buckets.require('acct', 'engine');
      expect(updated.storageClass).toBe('InfrequentAccess');
      expect((await storage.objects.put(updated, 'k', bytes('y')))?.storageClass).toBe('InfrequentAccess');
      await storage.objects.delete(updated, ['k']);
      await storage.buckets.delete('acct', 'engine');
      expect(await storage.getBucket('acct', 'engine')).toBeUndefined();
      const again = await storage.buckets.create('acct', { name: 'engine' });
      expect(again.id).not.toBe(looked.id);
      expect((await storage.getBucket('acct', 'engine'))?.id).toBe(again.id);
      // A record held from before the delete names a bucket that is gone: nothing is written through it.
      await expectCode(storage.objects.put(looked, 'stale', bytes('z')), 10006, 404);
      expect(await keys()).toEqual([]);
    });

    it('collects orphaned and temporary blobs left by an earlier process', async () => {
      const kept = await storage.objects.put(bucket, 'kept', bytes('kept'));
      const orphan = await fixture.blobs.write(bytes('orphan'));
      const later = new StorageService(fixture.store, fixture.blobs, {
        bootTime: Date.now() + 1000,
        clock: systemClock,
      });
      await later.start();
      await later.stop();
      const remaining: string[] = [];
      for await (const blob of fixture.blobs.list()) remaining.push(blob.blobId);
      expect(remaining).toEqual([kept!.segments[0]!.blobId]);
      expect(remaining).not.toContain(orphan.blobId);
    });
  });
}
