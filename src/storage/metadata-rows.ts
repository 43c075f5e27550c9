import type { SsecRecord } from './ssec.ts';
import type { BucketRecord, ObjectRecord, PartRecord, StorageClass, UploadRecord } from './types.ts';

/** Rows of the r2_* tables as either dialect returns them (BIGINT as numbers, BYTEA as Buffer), and their mapping to records. */
export interface BucketRow {
  id: string;
  account_id: string;
  name: string;
  created_at: number;
  location: string;
  storage_class: string;
  jurisdiction: string;
}

export interface ObjectRow {
  bucket_id: string;
  key: string;
  version: string;
  size: number;
  etag: string;
  uploaded: number;
  http_metadata: string;
  custom_metadata: string;
  checksums: string;
  storage_class: string;
  segments: string;
  /** Absent from listings, which do not select it. */
  inline_body?: Uint8Array | null;
  ssec?: string | null;
  inline_iv?: string | null;
}

/** Every r2_objects column but the inline body: what a listing needs. */
export const OBJECT_METADATA_COLUMNS =
  'bucket_id, key, version, size, etag, uploaded, http_metadata, custom_metadata, checksums, storage_class, segments, ssec, inline_iv';

export interface UploadRow {
  upload_id: string;
  bucket_id: string;
  key: string;
  created_at: number;
  http_metadata: string;
  custom_metadata: string;
  storage_class: string;
  ssec?: string | null;
}

export interface PartRow {
  upload_id: string;
  part_number: number;
  blob_id: string;
  size: number;
  etag: string;
  /** Null for parts stored before storage/0005 (their etag was the md5). */
  md5: string | null;
  uploaded_at: number;
  iv?: string | null;
}

export function toBucket(row: BucketRow): BucketRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    createdAt: Number(row.created_at),
    location: row.location,
    storageClass: row.storage_class as StorageClass,
    jurisdiction: row.jurisdiction,
  };
}

export function toObject(row: ObjectRow): ObjectRecord {
  return {
    bucketId: row.bucket_id,
    key: row.key,
    version: row.version,
    size: Number(row.size),
    etag: row.etag,
    uploaded: Number(row.uploaded),
    httpMetadata: JSON.parse(row.http_metadata),
    customMetadata: JSON.parse(row.custom_metadata),
    checksums: JSON.parse(row.checksums),
    storageClass: row.storage_class as StorageClass,
    segments: (JSON.parse(row.segments) as [string, number, string?][]).map(([blobId, size, iv]) =>
      iv ? { blobId, size, iv } : { blobId, size },
    ),
    ...(row.inline_body ? { inlineBody: row.inline_body } : {}),
    ...(row.ssec ? { ssec: JSON.parse(row.ssec) as SsecRecord } : {}),
    ...(row.inline_iv ? { inlineIv: row.inline_iv } : {}),
  };
}

/** An object's segments as stored: `[blobId, size]`, or `[blobId, size, iv]` for an SSE-C object's blob. */
export function segmentsJson(segments: ObjectRecord['segments']): string {
  return JSON.stringify(segments.map((s) => (s.iv ? [s.blobId, s.size, s.iv] : [s.blobId, s.size])));
}

export function toUpload(row: UploadRow): UploadRecord {
  return {
    uploadId: row.upload_id,
    bucketId: row.bucket_id,
    key: row.key,
    createdAt: Number(row.created_at),
    httpMetadata: JSON.parse(row.http_metadata),
    customMetadata: JSON.parse(row.custom_metadata),
    storageClass: row.storage_class as StorageClass,
    ...(row.ssec ? { ssec: JSON.parse(row.ssec) as SsecRecord } : {}),
  };
}

export function toPart(row: PartRow): PartRecord {
  return {
    uploadId: row.upload_id,
    partNumber: Number(row.part_number),
    blobId: row.blob_id,
    size: Number(row.size),
    etag: row.etag,
    md5: row.md5 ?? row.etag,
    uploadedAt: Number(row.uploaded_at),
    ...(row.iv ? { iv: row.iv } : {}),
  };
}
