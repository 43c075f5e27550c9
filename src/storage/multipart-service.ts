import { createHash, randomBytes } from 'node:crypto';
import { newId } from '../shared/ids.ts';
import { blobNamespace, type BlobStore } from './blob-store.ts';
import { measure } from './digest-stream.ts';
import { R2Errors } from './errors.ts';
import type { BlobGarbage } from './garbage.ts';
import { R2_LIMITS } from './limits.ts';
import type { MetadataStore } from './metadata-store.ts';
import type {
  BucketRecord,
  CustomMetadata,
  HttpMetadata,
  ObjectRecord,
  PartRecord,
  StorageClass,
  UploadRecord,
} from './types.ts';
import { encryptStream, newIv, ssecAccess, ssecRecordFor, type SsecKey } from './ssec.ts';
import { assertCustomMetadata, assertObjectKey } from './validation.ts';

export interface UploadedPart {
  partNumber: number;
  /** The part's etag as the binding gives it: random per upload, as R2's (Miniflare models it so). */
  etag: string;
  /** The MD5 of the part's bytes: what the S3 API shows as a part's ETag, and what S3 clients check it against. */
  md5: string;
}

/** A part as a completion lists it: its number and the etag the binding gave. */
export type ListedPart = Pick<UploadedPart, 'partNumber' | 'etag'>;

/**
 * Multipart uploads. Each part is a blob of its own; completing an upload publishes an object whose
 * segments are the chosen parts in order, so nothing is copied however large the object is.
 */
export class MultipartService {
  readonly #store: MetadataStore;
  readonly #blobs: BlobStore;
  readonly #garbage: BlobGarbage;

  constructor(store: MetadataStore, blobs: BlobStore, garbage: BlobGarbage) {
    this.#store = store;
    this.#blobs = blobs;
    this.#garbage = garbage;
  }

  async create(
    bucket: BucketRecord,
    key: string,
    options: {
      httpMetadata?: HttpMetadata | undefined;
      customMetadata?: CustomMetadata | undefined;
      storageClass?: StorageClass | undefined;
      /** SSE-C: every part must then be uploaded with this key, and the object is encrypted with it. */
      ssec?: SsecKey | undefined;
    } = {},
  ): Promise<UploadRecord> {
    assertObjectKey(key);
    const customMetadata = options.customMetadata ?? {};
    assertCustomMetadata(customMetadata);
    const upload: UploadRecord = {
      uploadId: newId(),
      bucketId: bucket.id,
      key,
      createdAt: Date.now(),
      httpMetadata: options.httpMetadata ?? {},
      customMetadata,
      storageClass: options.storageClass ?? bucket.storageClass,
      ...(options.ssec ? { ssec: ssecRecordFor(options.ssec) } : {}),
    };
    if (!(await this.#store.createUpload(upload))) throw R2Errors.noSuchBucket(bucket.name);
    return upload;
  }

  async uploadPart(
    bucket: BucketRecord,
    key: string,
    uploadId: string,
    partNumber: number,
    body: AsyncIterable<Uint8Array>,
    size?: number,
    ssec?: SsecKey,
  ): Promise<UploadedPart> {
    if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > R2_LIMITS.maxParts) {
      throw R2Errors.invalidArgument(`Part number must be an integer between 1 and ${R2_LIMITS.maxParts}, inclusive.`);
    }
    const upload = await this.#requireUpload(bucket, key, uploadId);
    // An SSE-C upload's parts need its key (checked against the upload's record); a plain one's refuse one.
    const partKey = ssecAccess(upload.ssec, ssec);
    if (size !== undefined && size > R2_LIMITS.maxPartBytes) throw R2Errors.entityTooLarge();
    const measured = measure(body, { algorithms: [], maxBytes: R2_LIMITS.maxPartBytes, expectedBytes: size });
    const iv = partKey ? newIv() : undefined;
    const stored = partKey ? encryptStream(measured.source, partKey, iv!) : measured.source;
    const blob = await this.#blobs.write(stored, { namespace: blobNamespace(bucket) });
    const { checksums } = measured.result();
    const part: PartRecord = {
      uploadId,
      partNumber,
      blobId: blob.blobId,
      size: blob.size,
      etag: randomBytes(16).toString('hex'),
      md5: checksums.md5!,
      uploadedAt: Date.now(),
      ...(iv ? { iv } : {}),
    };
    const result = await this.#store.putPart(bucket.id, part);
    if (result.status === 'no-upload') {
      await this.#blobs.delete([blob.blobId]);
      throw R2Errors.noSuchUpload();
    }
    if (result.replaced) this.#garbage.discard([result.replaced.blobId]);
    return { partNumber, etag: part.etag, md5: part.md5 };
  }

  /**
   * Publishes the listed parts as one object; the etag is md5(concatenated binary part md5s)-N (the parts' md5s, not their random etags). As R2:
   * an empty list publishes an empty object; a finished upload is NoSuchUpload, an upload id the key
   * never had is InternalError.
   */
  async complete(
    bucket: BucketRecord,
    key: string,
    uploadId: string,
    parts: readonly ListedPart[],
  ): Promise<ObjectRecord> {
    if (!(await this.#findUpload(bucket, key, uploadId))) {
      throw (await this.#wasFinished(bucket, key, uploadId)) ? R2Errors.noSuchUpload() : R2Errors.internalError(404);
    }
    const result = await this.#store.completeUpload(bucket.id, uploadId, (upload, stored) =>
      buildObject(upload, stored, parts),
    );
    // Finished by a concurrent complete or abort between the lookup and the transaction.
    if (result.status === 'no-upload') throw R2Errors.noSuchUpload();
    const discarded = result.unusedParts.map((p) => p.blobId);
    if (result.replaced) discarded.push(...result.replaced.segments.map((s) => s.blobId));
    this.#garbage.discard(discarded);
    return result.object;
  }

  /**
   * The object a completed upload published, while it is still the key's current object: its version is
   * the upload's id (ids are unique and an upload completes once), so a completion that already happened is
   * recognised. The S3 API answers a repeated CompleteMultipartUpload with it, as S3 does.
   */
  async completedObject(bucket: BucketRecord, key: string, uploadId: string): Promise<ObjectRecord | undefined> {
    if (!(await this.#wasFinished(bucket, key, uploadId))) return undefined;
    const object = await this.#store.getObject(bucket.id, key);
    return object?.version === uploadId ? object : undefined;
  }

  /** As R2: aborting a finished upload succeeds (nothing left to do); an unknown one is InternalError. */
  async abort(bucket: BucketRecord, key: string, uploadId: string): Promise<void> {
    if (await this.#findUpload(bucket, key, uploadId)) {
      const parts = await this.#store.abortUpload(bucket.id, uploadId);
      if (parts) this.#garbage.discard(parts.map((p) => p.blobId));
    } else if (!(await this.#wasFinished(bucket, key, uploadId))) {
      throw R2Errors.internalError(404);
    }
  }

  /** An upload's parts in part-number order; NoSuchUpload when the key has no such upload. */
  async listParts(bucket: BucketRecord, key: string, uploadId: string): Promise<PartRecord[]> {
    await this.#requireUpload(bucket, key, uploadId);
    return this.#store.listParts(uploadId);
  }

  /** Unfinished uploads under `prefix` in (key, upload id) order, after `after`. */
  listUploads(
    bucket: BucketRecord,
    query: { prefix: string; after?: { key: string; uploadId: string } | undefined; limit: number },
  ): Promise<UploadRecord[]> {
    return this.#store.listUploads(bucket.id, query);
  }

  async #requireUpload(bucket: BucketRecord, key: string, uploadId: string): Promise<UploadRecord> {
    const upload = await this.#findUpload(bucket, key, uploadId);
    if (!upload) throw R2Errors.noSuchUpload();
    return upload;
  }

  async #findUpload(bucket: BucketRecord, key: string, uploadId: string): Promise<UploadRecord | undefined> {
    assertObjectKey(key);
    const upload = await this.#store.getUpload(bucket.id, uploadId);
    return upload && upload.key === key ? upload : undefined;
  }

  /** Whether `uploadId` was an upload of `key` that has been completed or aborted. */
  async #wasFinished(bucket: BucketRecord, key: string, uploadId: string): Promise<boolean> {
    return (await this.#store.finishedUploadKey(bucket.id, uploadId)) === key;
  }
}

/**
 * Runs inside the completing transaction: any throw leaves the upload untouched. The checks and their
 * order are R2's: a part listed twice, then each listed part's etag, then every part but the last *as
 * listed* at least 5 MiB (EntityTooSmall), then in part-number order every part but the last the same
 * size and the last not larger (BadUpload). The object's parts are in part-number order.
 */
function buildObject(upload: UploadRecord, stored: PartRecord[], requested: readonly ListedPart[]): ObjectRecord {
  const listed = new Set<number>();
  for (const wanted of requested) {
    if (listed.has(wanted.partNumber)) throw R2Errors.internalError(400);
    listed.add(wanted.partNumber);
  }
  const byNumber = new Map(stored.map((p) => [p.partNumber, p]));
  const given = requested.map((wanted) => {
    const part = byNumber.get(wanted.partNumber);
    if (!part || part.etag !== wanted.etag.replace(/^"(.*)"$/, '$1')) throw R2Errors.invalidPart();
    return part;
  });
  if (given.slice(0, -1).some((p) => p.size < R2_LIMITS.minPartBytes)) throw R2Errors.entityTooSmall();
  const chosen = [...given].sort((a, b) => a.partNumber - b.partNumber);
  const leading = chosen.slice(0, -1);
  const partSize = leading[0]?.size;
  if (partSize !== undefined) {
    if (leading.some((p) => p.size !== partSize || p.size < R2_LIMITS.minPartBytes)) throw R2Errors.badUpload();
    if (chosen.at(-1)!.size > partSize) throw R2Errors.badUpload();
  }
  const size = chosen.reduce((total, p) => total + p.size, 0);
  if (size > R2_LIMITS.maxObjectBytes) throw R2Errors.entityTooLarge();
  const md5s = Buffer.concat(chosen.map((p) => Buffer.from(p.md5, 'hex')));
  return {
    bucketId: upload.bucketId,
    key: upload.key,
    // The upload's id: what lets a repeated completion find the object this one published.
    version: upload.uploadId,
    size,
    etag: `${createHash('md5').update(md5s).digest('hex')}-${chosen.length}`,
    uploaded: Date.now(),
    httpMetadata: upload.httpMetadata,
    customMetadata: upload.customMetadata,
    checksums: {},
    storageClass: upload.storageClass,
    segments: chosen.map((p) =>
      p.iv ? { blobId: p.blobId, size: p.size, iv: p.iv } : { blobId: p.blobId, size: p.size },
    ),
    ...(upload.ssec ? { ssec: upload.ssec } : {}),
  };
}
