import type { Principal } from '../../accounts/index.ts';

export const TEMP_PERMISSIONS = [
  'object-read-only',
  'object-read-write',
  'admin-read-only',
  'admin-read-write',
] as const;
export type TempPermission = (typeof TEMP_PERMISSIONS)[number];

/** The S3 actions R2 lets a temporary credential name (its `actions` claim), by category. */
export const READ_ACTIONS = [
  'HeadObject',
  'GetObject',
  'GetBucketLocation',
  'ListObjectsV1',
  'ListObjectsV2',
  'ListMultipartUploads',
  'ListParts',
] as const;
export const WRITE_ACTIONS = ['PutObject', 'DeleteObject', 'DeleteObjects', 'CopyObject'] as const;
export const MULTIPART_ACTIONS = [
  'CreateMultipartUpload',
  'UploadPart',
  'UploadPartCopy',
  'AbortMultipartUpload',
  'CompleteMultipartUpload',
] as const;
/** Bucket operations that read configuration: allowed by the admin-* permissions (with HeadBucket by every one). */
const CONFIG_READS = new Set(['HeadBucket', 'GetBucketCors', 'GetBucketLifecycleConfiguration', 'GetBucketEncryption']);

const READS = new Set<string>([...READ_ACTIONS, 'HeadBucket']);
const OBJECT_WRITES = new Set<string>([...WRITE_ACTIONS, ...MULTIPART_ACTIONS]);
export const VALID_ACTIONS = new Set<string>([...READ_ACTIONS, ...WRITE_ACTIONS, ...MULTIPART_ACTIONS]);

/**
 * What a verified temporary credential may do: one bucket of one account, a permission preset (or an
 * explicit list of S3 actions, from a locally signed token), optionally only some keys, until `expiresAt`.
 * Never more than its parent token: a parent that is read-only now makes the grant read-only.
 */
export interface TemporaryGrant {
  /** The parent token's id, which R2 reuses as the temporary Access Key ID. */
  accessKeyId: string;
  /** SHA-256 hex of the signed JWT: the key to check SigV4 signatures with. */
  secretAccessKey: string;
  accountId: string;
  bucket: string;
  permission: TempPermission | undefined;
  /** Explicit S3 action names (local signing only); undefined: those of `permission`. */
  actions: readonly string[] | undefined;
  /** Keys starting with one of these; with `objects`, both empty means the whole bucket. */
  prefixes: readonly string[];
  /** Exact keys. */
  objects: readonly string[];
  /** Milliseconds since the epoch. */
  expiresAt: number;
  /** Whom the parent token acts as (its user, reachable accounts, read-only flag) at the time of the lookup. */
  parent: Principal;
}

/**
 * Whether the grant allows an S3 operation, by its S3 name (`GetObject`, `PutBucketCors`, ...). Writes need
 * a writing permission and a parent that may write; configuration needs an admin-* permission.
 */
export function grantAllowsAction(grant: TemporaryGrant, action: string): boolean {
  const writes = !READS.has(action) && !CONFIG_READS.has(action);
  if (writes && grant.parent.readOnly) return false;
  if (grant.actions) return grant.actions.includes(action);
  switch (grant.permission) {
    case 'object-read-only':
      return READS.has(action);
    case 'object-read-write':
      return READS.has(action) || OBJECT_WRITES.has(action);
    case 'admin-read-only':
      return READS.has(action) || CONFIG_READS.has(action);
    case 'admin-read-write':
      // Everything on its own bucket (the route checks that the bucket is the grant's).
      return true;
    default:
      return false;
  }
}

/** Whether the grant's paths cover a key (no paths: every key of the bucket). */
export function grantAllowsKey(grant: TemporaryGrant, key: string): boolean {
  if (grant.prefixes.length === 0 && grant.objects.length === 0) return true;
  return grant.objects.includes(key) || grant.prefixes.some((prefix) => key.startsWith(prefix));
}

/**
 * Whether a listing under `prefix` stays within the grant's paths: no paths, or the listing prefix starts
 * with one of the granted prefixes (a listing cannot be narrowed to single objects).
 */
export function grantAllowsListing(grant: TemporaryGrant, prefix: string): boolean {
  if (grant.prefixes.length === 0 && grant.objects.length === 0) return true;
  return grant.prefixes.some((granted) => prefix.startsWith(granted));
}
