import type { BucketRecord, ObjectRecord } from '../storage/index.ts';
import { toIso } from '../shared/time.ts';

/** A bucket as the /client/v4 API shows it (what wrangler reads: name, creation_date). */
export function renderBucket(bucket: BucketRecord) {
  return {
    name: bucket.name,
    creation_date: toIso(bucket.createdAt),
    // Lower case, as the SDK types it (`wnam`, `enam`, ...); buckets made before this was fixed stored upper case.
    location: bucket.location.toLowerCase(),
    storage_class: bucket.storageClass,
    jurisdiction: bucket.jurisdiction,
  };
}

/** An object's metadata as the /client/v4 object API lists it (`size` a number, as the SDK's list type says). */
export function renderObjectInfo(object: ObjectRecord) {
  return {
    key: object.key,
    version: object.version,
    size: object.size,
    etag: object.etag,
    http_etag: `"${object.etag}"`,
    uploaded: toIso(object.uploaded),
    last_modified: toIso(object.uploaded),
    http_metadata: object.httpMetadata,
    custom_metadata: object.customMetadata,
    storage_class: object.storageClass,
  };
}

/** The answer to an object upload: the SDK types its `size` as a string (unlike the listing's number). */
export function renderUploadedObject(object: ObjectRecord) {
  return { ...renderObjectInfo(object), size: String(object.size) };
}
