import { clip } from '../shared/errors.ts';
import { R2Errors } from './errors.ts';
import { R2_LIMITS } from './limits.ts';
import type { CustomMetadata } from './types.ts';

const BUCKET_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

export function assertBucketName(name: string): void {
  if (!BUCKET_NAME.test(name)) throw R2Errors.invalidBucketName(name);
}

/**
 * Keys are UTF-8 strings of at most 1024 bytes; lone surrogates cannot be stored as UTF-8. The empty
 * key is a key like any other, as in R2's simulator (R2's documentation sets no lower bound).
 */
export function assertObjectKey(key: string): void {
  if (Buffer.byteLength(key, 'utf8') > R2_LIMITS.maxKeyBytes || !key.isWellFormed()) {
    throw R2Errors.invalidObjectName();
  }
}

/**
 * Custom metadata keys that belong to the platform (any case): the functions runtime's local read path
 * is told which blob file to read under such a key (LOCAL_BODY_METADATA_KEY, see R2WireBackend), so no
 * stored object may carry one. Checked here, where every write door (binding put, multipart create, the
 * v4 object API, S3) ends up, rather than in each door.
 */
export const RESERVED_METADATA_PREFIX = '__ledge';
export const LOCAL_BODY_METADATA_KEY = `${RESERVED_METADATA_PREFIX}_local_body`;
/** Marks a binding answer the runtime may cache until told it changed (r2/wire/handlers.ts, r2-cache.ts). */
export const CACHEABLE_METADATA_KEY = `${RESERVED_METADATA_PREFIX}_cacheable`;

export function isReservedMetadataKey(name: string): boolean {
  return name.slice(0, RESERVED_METADATA_PREFIX.length).toLowerCase() === RESERVED_METADATA_PREFIX;
}

/** Custom metadata counts the UTF-8 bytes of every name and value; reserved names are refused. */
export function assertCustomMetadata(metadata: CustomMetadata): void {
  let total = 0;
  for (const [name, value] of Object.entries(metadata)) {
    if (isReservedMetadataKey(name)) {
      throw R2Errors.invalidArgument(
        `Custom metadata key "${clip(name)}" is reserved: keys starting with ${RESERVED_METADATA_PREFIX} (any case) belong to the platform.`,
      );
    }
    total += Buffer.byteLength(name) + Buffer.byteLength(value);
  }
  if (total > R2_LIMITS.maxCustomMetadataBytes) throw R2Errors.metadataTooLarge();
}

export function assertListLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > R2_LIMITS.maxListLimit) throw R2Errors.invalidMaxKeys();
}
