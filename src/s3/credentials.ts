import type { AccountService, Principal } from '../accounts/index.ts';
import { grantAllowsAction, grantAllowsKey, grantAllowsListing, type TemporaryCredentialService } from '../r2/index.ts';
import { S3Error } from './errors.ts';
import type { Clock } from '../shared/clock.ts';

/** What a request asks to do, for a credential limited further than its principal (temporary ones). */
export interface S3Action {
  accountId: string;
  /** S3's operation name (`GetObject`, `ListObjectsV2`, `PutBucketCors`, ...). */
  operation: string;
  /** Undefined for ListBuckets. */
  bucket: string | undefined;
  /** The object key, for object operations. */
  key?: string | undefined;
  /** The listing prefix, for listings. */
  prefix?: string | undefined;
}

/** An access key's secret and who it acts for. */
export interface S3AccessKey {
  /** The SigV4 secret access key. */
  secret: string;
  principal: Principal;
  /** Temporary credentials: what the key is limited to (bucket, paths, permission). */
  permits?(action: S3Action): boolean;
}

/**
 * Where access keys come from. API tokens are one source (`tokenAccessKeys`), temporary credentials
 * (POST /accounts/{id}/r2/temp-access-credentials, presented with x-amz-security-token) another
 * (`temporaryAccessKeys`); `chainSources` asks each in turn. A source throws an S3Error for a credential it
 * knows to be bad (an expired session token), and answers undefined for one that is not its own.
 */
export interface S3CredentialSource {
  lookup(accessKeyId: string, sessionToken: string | undefined): Promise<S3AccessKey | undefined>;
}

/** How long a looked-up key is reused: signature checks stay cheap; a disabled token stops working within it. */
const KEY_CACHE_MS = 2_000;
const CACHED_KEYS = 1000;

/**
 * Access keys made from API tokens as R2 makes them (id = token id, secret = SHA-256 hex of its value,
 * which is the digest Ledge stores). A request carrying a session token is not theirs.
 */
export function tokenAccessKeys(accounts: AccountService, clock: Clock): S3CredentialSource {
  const cache = new Map<string, { key: S3AccessKey | undefined; until: number }>();
  return {
    async lookup(accessKeyId, sessionToken) {
      if (sessionToken !== undefined) return undefined;
      const now = clock.now();
      const hit = cache.get(accessKeyId);
      if (hit && hit.until > now) return hit.key;
      const pair = await accounts.s3KeyPair(accessKeyId);
      const key = pair && { secret: pair.secretAccessKey, principal: pair.principal };
      if (cache.size >= CACHED_KEYS) cache.clear();
      cache.set(accessKeyId, { key, until: now + KEY_CACHE_MS });
      return key;
    },
  };
}

const READ_OPERATIONS = new Set([
  'HeadObject',
  'GetObject',
  'HeadBucket',
  'GetBucketLocation',
  'GetBucketEncryption',
  'GetBucketCors',
  'GetBucketLifecycleConfiguration',
  'ListObjectsV1',
  'ListObjectsV2',
  'ListMultipartUploads',
  'ListParts',
  'ListBuckets',
]);

/** Whether an operation only reads (what a read-only token may do). */
export function isReadOperation(operation: string): boolean {
  return READ_OPERATIONS.has(operation);
}

/**
 * Temporary credentials: the session token names the grant (one bucket of one account, a permission or
 * actions, optionally prefixes or objects, an expiry); the parent token's principal, limited to the grant.
 */
export function temporaryAccessKeys(credentials: TemporaryCredentialService): S3CredentialSource {
  return {
    async lookup(accessKeyId, sessionToken) {
      if (sessionToken === undefined) return undefined;
      const found = await credentials.resolve(accessKeyId, sessionToken);
      if (!found.ok) {
        throw found.reason === 'expired'
          ? new S3Error(400, 'ExpiredToken', 'The provided token has expired.')
          : new S3Error(400, 'InvalidToken', 'The provided token is malformed or otherwise invalid.');
      }
      const { grant } = found;
      const principal: Principal = {
        ...grant.parent,
        accountIds: new Set(grant.parent.accountIds.has(grant.accountId) ? [grant.accountId] : []),
      };
      return {
        secret: grant.secretAccessKey,
        principal,
        permits: (action) => {
          if (action.accountId !== grant.accountId || action.bucket !== grant.bucket) return false;
          if (!grantAllowsAction(grant, action.operation)) return false;
          if (action.key !== undefined && !grantAllowsKey(grant, action.key)) return false;
          if (action.prefix !== undefined && !grantAllowsListing(grant, action.prefix)) return false;
          return true;
        },
      };
    },
  };
}

/** Asks each source in turn. */
export function chainSources(sources: readonly S3CredentialSource[]): S3CredentialSource {
  return {
    async lookup(accessKeyId, sessionToken) {
      for (const source of sources) {
        const key = await source.lookup(accessKeyId, sessionToken);
        if (key) return key;
      }
      return undefined;
    },
  };
}
