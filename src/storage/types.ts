import type { SsecRecord } from './ssec.ts';

/** HTTP metadata stored with an object (what `writeHttpMetadata` turns back into headers). */
export interface HttpMetadata {
  contentType?: string;
  contentLanguage?: string;
  contentDisposition?: string;
  contentEncoding?: string;
  cacheControl?: string;
  /** Expires, in milliseconds since the epoch. */
  cacheExpiry?: number;
}

export type CustomMetadata = Record<string, string>;

/** Hex digests of an object's bytes (md5 always for single-part objects, none for multipart). */
export interface Checksums {
  md5?: string;
  sha1?: string;
  sha256?: string;
  sha384?: string;
  sha512?: string;
}

export const CHECKSUM_ALGORITHMS = ['md5', 'sha1', 'sha256', 'sha384', 'sha512'] as const;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

export const STORAGE_CLASSES = ['Standard', 'InfrequentAccess'] as const;
export type StorageClass = (typeof STORAGE_CLASSES)[number];

/** One stored blob that makes up part of an object's bytes (a single-part object has one). */
export interface BlobSegment {
  blobId: string;
  size: number;
  /** The AES-256-CTR IV (base64) of an SSE-C object's blob (see ssec.ts); absent for plain objects. */
  iv?: string | undefined;
}

export interface BucketRecord {
  /** Internal id; objects reference it so a bucket name can be reused after a delete. */
  id: string;
  accountId: string;
  name: string;
  createdAt: number;
  location: string;
  storageClass: StorageClass;
  jurisdiction: string;
}

export interface ObjectRecord {
  bucketId: string;
  key: string;
  version: string;
  size: number;
  etag: string;
  /** Milliseconds since the epoch. */
  uploaded: number;
  httpMetadata: HttpMetadata;
  customMetadata: CustomMetadata;
  checksums: Checksums;
  storageClass: StorageClass;
  /** Where the bytes are: blobs in order (empty when `inlineBody` holds them). */
  segments: BlobSegment[];
  /**
   * The bytes of a small object, kept in its metadata record instead of a blob (see SMALL_BODY_BYTES, shared/http-listener/small-body.ts):
   * one transaction stores and publishes it. Object listings leave it out.
   */
  inlineBody?: Uint8Array | undefined;
  /** Set when the object is encrypted with a customer key (SSE-C): how to check the key, never the key. */
  ssec?: SsecRecord | undefined;
  /** The IV of an encrypted inline body (blobs carry theirs in their segment). */
  inlineIv?: string | undefined;
}

export interface UploadRecord {
  uploadId: string;
  bucketId: string;
  key: string;
  createdAt: number;
  httpMetadata: HttpMetadata;
  customMetadata: CustomMetadata;
  storageClass: StorageClass;
  /** SSE-C: every part must be uploaded with this key, and the object is encrypted with it. */
  ssec?: SsecRecord | undefined;
}

export interface PartRecord {
  uploadId: string;
  partNumber: number;
  blobId: string;
  size: number;
  /**
   * A fresh random id per upload of the part, as R2 (and Miniflare) give: uploading the same bytes to one
   * part number again gives a new etag, so completing with the superseded one fails (10025).
   */
  etag: string;
  /** md5 hex of the part's bytes (the completed object's etag is made from these). */
  md5: string;
  uploadedAt: number;
  /** The IV of an SSE-C upload's part (base64). */
  iv?: string | undefined;
}

/** An etag condition as the binding sends it. */
export interface EtagMatcher {
  type: 'strong' | 'weak' | 'wildcard';
  value?: string;
}

/** `onlyIf` of get/put: RFC 7232 semantics (see conditionals.ts). Times in milliseconds. */
export interface Conditional {
  etagMatches?: EtagMatcher[];
  etagDoesNotMatch?: EtagMatcher[];
  uploadedBefore?: number;
  uploadedAfter?: number;
  secondsGranularity?: boolean;
}

/** A range as requested: object form (offset/length/suffix) or an HTTP Range header. */
export type RangeRequest = { offset?: number; length?: number; suffix?: number } | { header: string };

export interface ResolvedRange {
  offset: number;
  length: number;
}
