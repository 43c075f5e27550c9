import type { AccountService, Principal } from '../accounts/index.ts';

/** What a request asks to do, for a credential that is limited further than its principal (temporary ones). */
export interface S3Action {
  accountId: string;
  /** Undefined for ListBuckets. */
  bucket: string | undefined;
  /** The object key (or the listing prefix); undefined for bucket-level operations. */
  key: string | undefined;
  write: boolean;
}

/** An access key's secret and who it acts for. */
export interface S3AccessKey {
  /** The SigV4 secret access key. */
  secret: string;
  principal: Principal;
  /**
   * Temporary credentials: the session token the request must present (x-amz-security-token), and what the
   * key is limited to (buckets, prefixes, read-only). Long-lived token keys have neither.
   */
  sessionToken?: string | undefined;
  permits?(action: S3Action): boolean;
}

/**
 * Where access keys come from. The API tokens are one source (`tokenAccessKeys`); temporary credentials
 * (POST /accounts/{id}/r2/temp-access-credentials) plug in as another. The first source that knows the key
 * answers.
 */
export interface S3CredentialSource {
  lookup(accessKeyId: string): Promise<S3AccessKey | undefined>;
}

/** How long a looked-up key is reused: signature checks stay cheap; a disabled token stops working within it. */
const KEY_CACHE_MS = 2_000;
const CACHED_KEYS = 1000;

/** Access keys made from API tokens as R2 makes them (id = token id, secret = SHA-256 hex of its value). */
export function tokenAccessKeys(accounts: AccountService): S3CredentialSource {
  const cache = new Map<string, { key: S3AccessKey | undefined; until: number }>();
  return {
    async lookup(accessKeyId) {
      const now = Date.now();
      const hit = cache.get(accessKeyId);
      if (hit && hit.until > now) return hit.key;
      const key = await accounts.s3AccessKey(accessKeyId);
      if (cache.size >= CACHED_KEYS) cache.clear();
      cache.set(accessKeyId, { key, until: now + KEY_CACHE_MS });
      return key;
    },
  };
}

/** Asks each source in turn. */
export function chainSources(sources: readonly S3CredentialSource[]): S3CredentialSource {
  return {
    async lookup(accessKeyId) {
      for (const source of sources) {
        const key = await source.lookup(accessKeyId);
        if (key) return key;
      }
      return undefined;
    },
  };
}
