import { newId } from '../shared/ids.ts';
import { blobNamespace, type BlobStore } from './blob-store.ts';
import type { BodySource } from './body-source.ts';
import { conditionHolds } from './conditionals.ts';
import { assertDigestShapes, measure, verifyDigests } from './digest-stream.ts';
import { R2Errors } from './errors.ts';
import type { BlobGarbage } from './garbage.ts';
import { R2_LIMITS } from './limits.ts';
import type { MetadataStore } from './metadata-store.ts';
import {
  collectBody,
  inlineSlice,
  openDecryptedSegments,
  openSegments,
  openSingleFile,
  readSegments,
} from './object-reader.ts';
import { resolveRange } from './ranges.ts';
import type {
  BucketRecord,
  ChecksumAlgorithm,
  Checksums,
  Conditional,
  CustomMetadata,
  HttpMetadata,
  ObjectRecord,
  RangeRequest,
  ResolvedRange,
  StorageClass,
} from './types.ts';
import { assertCustomMetadata, assertObjectKey } from './validation.ts';
import { cryptAt, encryptStream, newIv, ssecAccess, ssecRecordFor, type SsecKey } from './ssec.ts';

export interface PutOptions {
  /** The body length when known up front (Content-Length): too large is refused before reading. */
  size?: number | undefined;
  httpMetadata?: HttpMetadata | undefined;
  customMetadata?: CustomMetadata | undefined;
  /** Digests the client declared (hex); a mismatch is BadDigest and nothing is stored. */
  digests?: Checksums | undefined;
  onlyIf?: Conditional | undefined;
  storageClass?: StorageClass | undefined;
  /** SSE-C: encrypt the object at rest with this customer key (see ssec.ts). */
  ssec?: SsecKey | undefined;
}

export interface GetOptions {
  range?: RangeRequest | undefined;
  onlyIf?: Conditional | undefined;
  /** SSE-C: the key an encrypted object must be read with (none for a plain object). */
  ssec?: SsecKey | undefined;
}

/**
 * An object read: its metadata, the range served, and its body (body-source.ts). `get` answers a stream
 * or, for an inline body, its bytes; `read` also answers a small body's bytes, a file span, or a local file.
 */
export type ReadResult =
  | { status: 'found'; object: ObjectRecord; range: ResolvedRange | undefined; body: BodySource }
  | { status: 'precondition-failed'; object: ObjectRecord };
export type GetResult = ReadResult;

/**
 * Bodies up to this size (declared up front) are stored in the object's metadata record instead of a
 * blob file: one transaction stores and publishes them, with no file to create, fsync, rename and
 * later delete. bench/functions, PUT 1 KiB: ~0.6k -> ~1.2k req/s
 * (docs/benchmarks-history.md, "meeting the targets", 2026-11-21).
 * SQLite reads blobs of this size from its pages as fast as a file (sqlite.org/intern-v-extern-blob.html);
 * larger ones stream to files, so memory per upload stays bounded.
 */
export const INLINE_BODY_LIMIT = 64 * 1024;

/** Single objects: put, get, head, delete. All writes are atomic per key (see MetadataStore.commitObject). */
export class ObjectService {
  readonly #store: MetadataStore;
  readonly #blobs: BlobStore;
  readonly #garbage: BlobGarbage;

  constructor(store: MetadataStore, blobs: BlobStore, garbage: BlobGarbage) {
    this.#store = store;
    this.#blobs = blobs;
    this.#garbage = garbage;
  }

  /**
   * Streams `body` into a blob, verifies it, then publishes it in one metadata transaction. Returns null
   * when `onlyIf` does not hold (checked before and again at commit). Any failure stores nothing.
   */
  async put(
    bucket: BucketRecord,
    key: string,
    body: AsyncIterable<Uint8Array>,
    options: PutOptions = {},
  ): Promise<ObjectRecord | null> {
    assertObjectKey(key);
    const customMetadata = options.customMetadata ?? {};
    assertCustomMetadata(customMetadata);
    const digests = options.digests ?? {};
    assertDigestShapes(digests);
    if (options.size !== undefined && options.size > R2_LIMITS.maxSinglePutBytes) throw R2Errors.entityTooLarge();
    const precondition = (current: ObjectRecord | undefined) => conditionHolds(options.onlyIf, current);
    if (options.onlyIf && !precondition(await this.#store.getObject(bucket.id, key))) return null;

    // SSE-C: the digests are of the plaintext (the client's Content-MD5 and the etag are); only the
    // stored bytes are ciphertext, each piece under an IV of its own.
    const ssec = options.ssec;
    const iv = ssec ? newIv() : undefined;
    const algorithms = (Object.keys(digests) as ChecksumAlgorithm[]).filter((a) => digests[a] !== undefined);
    const measured = measure(body, { algorithms, maxBytes: R2_LIMITS.maxSinglePutBytes, expectedBytes: options.size });
    const publish = async (
      where: Pick<ObjectRecord, 'segments' | 'inlineBody' | 'inlineIv'>,
    ): Promise<ObjectRecord | null> => {
      const { size, checksums } = measured.result();
      verifyDigests(digests, checksums);
      const object: ObjectRecord = {
        bucketId: bucket.id,
        key,
        version: newId(),
        size,
        etag: checksums.md5!,
        uploaded: Date.now(),
        httpMetadata: options.httpMetadata ?? {},
        customMetadata,
        checksums,
        storageClass: options.storageClass ?? bucket.storageClass,
        ...(ssec ? { ssec: ssecRecordFor(ssec) } : {}),
        ...where,
      };
      const result = await this.#store.commitObject(object, options.onlyIf ? precondition : undefined);
      if (result.status === 'no-bucket') throw R2Errors.noSuchBucket(bucket.name);
      if (result.status === 'precondition-failed') return null;
      if (result.replaced) this.#garbage.discard(result.replaced.segments.map((s) => s.blobId));
      return object;
    };

    if (options.size !== undefined && options.size <= INLINE_BODY_LIMIT) {
      const inlineBody = await collectBody(measured.source, options.size);
      if (!ssec) return publish({ segments: [], inlineBody });
      return publish({ segments: [], inlineBody: cryptAt(inlineBody, ssec, iv!, 0), inlineIv: iv });
    }
    const stored = ssec ? encryptStream(measured.source, ssec, iv!) : measured.source;
    const blob = await this.#blobs.write(stored, { namespace: blobNamespace(bucket) });
    let committed = false;
    try {
      const object = await publish({ segments: [{ blobId: blob.blobId, size: blob.size, ...(iv ? { iv } : {}) }] });
      committed = object !== null;
      return object;
    } finally {
      if (!committed) await this.#blobs.delete([blob.blobId]);
    }
  }

  head(bucket: BucketRecord, key: string): Promise<ObjectRecord | undefined> {
    assertObjectKey(key);
    return this.#store.getObject(bucket.id, key);
  }

  /** undefined when the key does not exist; a failed precondition returns the metadata without a body. */
  async get(bucket: BucketRecord, key: string, options: GetOptions = {}): Promise<GetResult | undefined> {
    const found = await this.#find(bucket, key, options);
    if (found?.status !== 'found') return found;
    const { object, range, span, ssecKey } = found;
    if (ssecKey) return { status: 'found', object, range, body: await this.#decrypted(object, span, ssecKey) };
    const body: BodySource = object.inlineBody
      ? { kind: 'bytes', bytes: inlineSlice(object.inlineBody, span) }
      : { kind: 'stream', stream: await openSegments(this.#blobs, object.segments, span) };
    return { status: 'found', object, range, body };
  }

  /**
   * `get` for callers that can send a buffer: bodies of at most `bufferUpTo` bytes are read in one go
   * (no stream per request, which dominates the cost of small reads); larger ones stream.
   */
  async read(
    bucket: BucketRecord,
    key: string,
    options: GetOptions & { bufferUpTo: number; files?: boolean; local?: boolean },
  ): Promise<ReadResult | undefined> {
    const found = await this.#find(bucket, key, options);
    if (found?.status !== 'found') return found;
    const { object, range, span, ssecKey } = found;
    // An encrypted object is never handed over as its file or blob bytes: only decrypted, as a stream.
    if (ssecKey) return { status: 'found', object, range, body: await this.#decrypted(object, span, ssecKey) };
    if (object.inlineBody)
      return { status: 'found', object, range, body: { kind: 'bytes', bytes: inlineSlice(object.inlineBody, span) } };
    const small = span.length <= options.bufferUpTo;
    // `local`: a whole object in one blob of this very bucket is read by the caller from its file (never a
    // blob of another bucket: the reader is handed this bucket's directory only).
    if (options.local && !small && range === undefined && object.segments.length === 1) {
      const localFile = this.#blobs.localFile?.(object.segments[0]!.blobId);
      if (localFile?.namespace === blobNamespace(bucket))
        return { status: 'found', object, range, body: { kind: 'local', localFile } };
    }
    const bytes = small ? await readSegments(this.#blobs, object.segments, span) : undefined;
    if (bytes) return { status: 'found', object, range, body: { kind: 'bytes', bytes } };
    const file = options.files && !small ? await openSingleFile(this.#blobs, object.segments, span) : undefined;
    if (file) return { status: 'found', object, range, body: { kind: 'file', file } };
    const stream = await openSegments(this.#blobs, object.segments, span);
    return { status: 'found', object, range, body: { kind: 'stream', stream } };
  }

  /**
   * The object, its condition and range resolved. SSE-C is checked before the condition, as S3 does: an
   * encrypted object asks for its key (and a plain one refuses one) even when the condition fails.
   */
  async #find(bucket: BucketRecord, key: string, options: GetOptions) {
    assertObjectKey(key);
    const object = await this.#store.getObject(bucket.id, key);
    if (!object) return undefined;
    const ssecKey = ssecAccess(object.ssec, options.ssec);
    if (!conditionHolds(options.onlyIf, object)) return { status: 'precondition-failed' as const, object };
    const range = resolveRange(options.range, object.size);
    return {
      status: 'found' as const,
      object,
      range,
      span: range ?? { offset: 0, length: object.size },
      ssecKey,
    };
  }

  async #decrypted(object: ObjectRecord, span: ResolvedRange, key: SsecKey): Promise<BodySource> {
    if (object.inlineBody) {
      const slice = inlineSlice(object.inlineBody, span);
      return { kind: 'bytes', bytes: cryptAt(slice, key, object.inlineIv!, span.offset) };
    }
    return { kind: 'stream', stream: await openDecryptedSegments(this.#blobs, object.segments, span, key) };
  }

  /** Deletes up to 1000 keys; keys that do not exist are fine. */
  async delete(bucket: BucketRecord, keys: readonly string[]): Promise<void> {
    if (keys.length > R2_LIMITS.maxDeleteKeys) {
      throw R2Errors.invalidArgument(`at most ${R2_LIMITS.maxDeleteKeys} keys can be deleted at once`);
    }
    for (const key of keys) assertObjectKey(key);
    const removed = await this.#store.deleteObjects(bucket.id, keys);
    this.#garbage.discard(removed.flatMap((o) => o.segments.map((s) => s.blobId)));
  }
}
