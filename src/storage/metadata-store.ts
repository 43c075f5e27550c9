import type { CorsRule } from './cors-rules.ts';
import type { LifecycleRule } from './lifecycle-rules.ts';
import type { BucketRecord, ObjectRecord, PartRecord, StorageClass, UploadRecord } from './types.ts';

export interface BucketListQuery {
  nameContains?: string | undefined;
  /** Exclusive bound in the listing direction. */
  after?: string | undefined;
  direction: 'asc' | 'desc';
  limit: number;
}

export interface ObjectListQuery {
  prefix?: string | undefined;
  /** Keys strictly greater than this. */
  startAfter?: string | undefined;
  /** Keys greater than or equal to this (used to skip past a delimited prefix). */
  startAt?: string | undefined;
  limit: number;
}

export type CommitResult =
  | { status: 'committed'; replaced: ObjectRecord | undefined }
  | { status: 'precondition-failed'; current: ObjectRecord | undefined }
  | { status: 'no-bucket' };

export type PartResult = { status: 'stored'; replaced: PartRecord | undefined } | { status: 'no-upload' };

export type CompleteResult =
  | { status: 'completed'; object: ObjectRecord; replaced: ObjectRecord | undefined; unusedParts: PartRecord[] }
  | { status: 'no-upload' };

export type BucketDeleteResult =
  { status: 'deleted'; discardedParts: PartRecord[] } | { status: 'not-empty' } | { status: 'missing' };

/**
 * Object-storage metadata: buckets, objects, multipart uploads and parts. Every method that changes
 * more than one row is atomic. Callbacks passed in (preconditions, object builders) run synchronously
 * inside the transaction, which a PostgreSQL implementation reproduces with SELECT ... FOR UPDATE.
 * Blob bytes live elsewhere (BlobStore) except a small object's `inlineBody`, stored with its record.
 * Writes that publish or remove objects or parts resolve only once durable (they survive a power loss):
 * the caller acknowledges the upload after that.
 */
export interface BucketUsage {
  objectCount: number;
  payloadSize: number;
  metadataSize: number;
}

export interface MetadataStore {
  createBucket(bucket: BucketRecord): Promise<boolean>;
  getBucket(accountId: string, name: string): Promise<BucketRecord | undefined>;
  listBuckets(accountId: string, query: BucketListQuery): Promise<BucketRecord[]>;
  updateBucket(
    accountId: string,
    name: string,
    patch: { storageClass?: StorageClass },
  ): Promise<BucketRecord | undefined>;
  /** What a bucket holds now: its objects, their bytes, and the bytes of their keys and metadata. */
  bucketUsage(bucketId: string): Promise<BucketUsage>;
  /** Refuses a bucket that still holds objects; drops its unfinished uploads with it. */
  deleteBucket(accountId: string, name: string): Promise<BucketDeleteResult>;

  getObject(bucketId: string, key: string): Promise<ObjectRecord | undefined>;
  /** Inserts or replaces an object if `precondition` holds for the current one, atomically. */
  commitObject(
    object: ObjectRecord,
    precondition?: (current: ObjectRecord | undefined) => boolean,
  ): Promise<CommitResult>;
  /** Deletes the keys that exist and returns their records (their blobs become garbage). */
  deleteObjects(bucketId: string, keys: readonly string[]): Promise<ObjectRecord[]>;
  /** Objects in byte-wise key order. */
  listObjects(bucketId: string, query: ObjectListQuery): Promise<ObjectRecord[]>;

  createUpload(upload: UploadRecord): Promise<boolean>;
  getUpload(bucketId: string, uploadId: string): Promise<UploadRecord | undefined>;
  /** An upload's parts in part-number order (the S3 API's ListParts). */
  listParts(uploadId: string): Promise<PartRecord[]>;
  /**
   * A bucket's unfinished uploads under `prefix`, in (key, upload id) order, after `after` (the S3 API's
   * ListMultipartUploads).
   */
  listUploads(
    bucketId: string,
    query: { prefix: string; after?: { key: string; uploadId: string } | undefined; limit: number },
  ): Promise<UploadRecord[]>;
  putPart(bucketId: string, part: PartRecord): Promise<PartResult>;
  /**
   * Turns an upload into an object: `build` sees the upload and its parts and returns the object (or
   * throws to refuse); the upload and its parts go away in the same transaction, the upload is
   * remembered as finished.
   */
  completeUpload(
    bucketId: string,
    uploadId: string,
    build: (upload: UploadRecord, parts: PartRecord[]) => ObjectRecord,
  ): Promise<CompleteResult>;
  /** Removes an upload; returns its parts (their blobs become garbage), or undefined if unknown. */
  abortUpload(bucketId: string, uploadId: string): Promise<PartRecord[] | undefined>;
  uploadsCreatedBefore(time: number, limit: number): Promise<UploadRecord[]>;
  /** The key of an upload that was completed or aborted (and not yet forgotten), else undefined. */
  finishedUploadKey(bucketId: string, uploadId: string): Promise<string | undefined>;
  /** Forgets uploads finished before `time`; returns how many. */
  forgetFinishedUploads(time: number): Promise<number>;

  /** A bucket's lifecycle rules (an empty list when none were ever set). */
  getLifecycle(bucketId: string): Promise<LifecycleRule[]>;
  /** Replaces a bucket's rule set; false if the bucket no longer exists. */
  putLifecycle(bucketId: string, rules: readonly LifecycleRule[]): Promise<boolean>;
  /** Every bucket that has at least one lifecycle rule, with its rules (what the lifecycle job walks). */
  bucketsWithLifecycle(): Promise<{ bucket: BucketRecord; rules: LifecycleRule[] }[]>;
  /** A bucket's CORS rules; undefined when none were set (an empty list was set explicitly). */
  getCors(bucketId: string): Promise<CorsRule[] | undefined>;
  /** Replaces a bucket's CORS rules; false if the bucket no longer exists. */
  putCors(bucketId: string, rules: readonly CorsRule[]): Promise<boolean>;
  /** Removes a bucket's CORS rules; false when it had none. */
  deleteCors(bucketId: string): Promise<boolean>;
  /**
   * Deletes each object only if its current version is still the one given (an object overwritten
   * since the caller read it stays), in one transaction; returns the records removed.
   */
  deleteObjectVersions(bucketId: string, targets: readonly { key: string; version: string }[]): Promise<ObjectRecord[]>;
  /** Sets the storage class of each object whose current version is the one given; returns how many changed. */
  setObjectStorageClass(
    bucketId: string,
    targets: readonly { key: string; version: string }[],
    storageClass: StorageClass,
  ): Promise<number>;
  /** A bucket's uploads under `prefix` created before `time`, oldest first. */
  bucketUploadsCreatedBefore(bucketId: string, prefix: string, time: number, limit: number): Promise<UploadRecord[]>;

  /** Every blob id some object or part references (for orphan collection). */
  referencedBlobIds(): Promise<Set<string>>;
}
