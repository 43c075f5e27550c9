/**
 * Object storage engine (what other subsystems may import).
 *
 * - `StorageService`: buckets (`storage.buckets`), objects (`storage.objects`), multipart
 *   (`storage.multipart`), `storage.list(bucket, ...)`, and `storage.getBucket(accountId, name)` which the
 *   workers deploy uses to refuse a binding to a bucket that does not exist.
 * - Bucket CORS: `storage.cors` (get/put/delete by name, `rulesOf(bucket)`) and the pure matcher
 *   `corsPreflight` / `corsActual` (origin + method + request headers -> response headers) that every
 *   door applying CORS (the S3 endpoint, public buckets) calls.
 * - `MetadataStore` / `BlobStore`: the two persistence interfaces, with the SQL (SQLite or PostgreSQL) and filesystem
 *   implementations (and `S3BlobStore` for an S3-compatible service); test/storage/conformance/ holds the suite any other implementation must pass.
 */
export { StorageService, type StorageOptions } from './storage-service.ts';
export { LifecycleService } from './lifecycle-service.ts';
export { isMidnightUtc, LifecyclePutSchema, type LifecycleRule } from './lifecycle-rules.ts';
export { CorsService } from './cors-service.ts';
export {
  CorsPutSchema,
  CorsRuleSchema,
  CORS_METHODS,
  MAX_CORS_RULES,
  assertCorsRules,
  type CorsMethod,
  type CorsRule,
} from './cors-rules.ts';
export {
  corsActual,
  corsPreflight,
  isPreflight,
  type CorsHeaders,
  type CorsPreflight,
  type PreflightAnswer,
} from './cors-match.ts';
export { storageMigrations } from './migrations.ts';
export type { MetadataStore } from './metadata-store.ts';
export { SqlMetadataStore } from './sql-metadata-store.ts';
export { ObjectChanges, type ChangedBucket, type ObjectChangeListener } from './object-changes.ts';
export { BlobNotFoundError, type BlobStore, type OpenBlobFile, type StoredBlob } from './blob-store.ts';
export { bodyStream, releaseBody, type BodySource } from './body-source.ts';
export { FsBlobStore } from './fs-blob-store.ts';
export { S3BlobStore } from './s3-blob-store.ts';
export type { S3Settings } from './s3-client.ts';
export { R2Errors } from './errors.ts';
export { R2_LIMITS } from './limits.ts';
export { CACHEABLE_METADATA_KEY, LOCAL_BODY_METADATA_KEY, isReservedMetadataKey } from './validation.ts';
export { conditionalFromHeaders, conditionHolds } from './conditionals.ts';
export { type GetResult, type PutOptions, type ReadResult } from './object-service.ts';
export type { ListResult, ListOptions } from './object-listing.ts';
export type * from './types.ts';
export { STORAGE_CLASSES, CHECKSUM_ALGORITHMS } from './types.ts';
export { SsecErrors, ssecAccess, ssecKeyFrom, ssecKeyFromHex, type SsecKey, type SsecRecord } from './ssec.ts';
