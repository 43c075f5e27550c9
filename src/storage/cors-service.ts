import type { BucketService } from './bucket-service.ts';
import { assertCorsRules, type CorsRule } from './cors-rules.ts';
import { R2Errors } from './errors.ts';
import type { MetadataStore } from './metadata-store.ts';
import type { BucketRecord } from './types.ts';

/**
 * Bucket CORS rules, for the /cors routes and the S3 endpoint's Get/Put/DeleteBucketCors (by bucket
 * name, errors as R2's v4 codes), and for the doors that apply them (`rulesOf`, by bucket record: the S3
 * endpoint and public buckets, which then call the pure matcher in cors-match.ts).
 */
export class CorsService {
  readonly #store: MetadataStore;
  readonly #buckets: BucketService;

  constructor(store: MetadataStore, buckets: BucketService) {
    this.#store = store;
    this.#buckets = buckets;
  }

  /** The bucket's rules, or undefined when it has no CORS configuration (R2: 10059, S3: NoSuchCORSConfiguration). */
  async get(accountId: string, bucketName: string): Promise<CorsRule[] | undefined> {
    const bucket = await this.#buckets.require(accountId, bucketName);
    return this.#store.getCors(bucket.id);
  }

  /** Replaces the bucket's whole rule set, after R2's checks (what both the /cors PUT and PutBucketCors do). */
  async put(accountId: string, bucketName: string, rules: CorsRule[]): Promise<void> {
    assertCorsRules(rules);
    const bucket = await this.#buckets.require(accountId, bucketName);
    if (!(await this.#store.putCors(bucket.id, rules))) throw R2Errors.noSuchBucket(bucketName);
  }

  /** Removes the configuration; deleting one that does not exist succeeds (as S3's DeleteBucketCors). */
  async delete(accountId: string, bucketName: string): Promise<void> {
    const bucket = await this.#buckets.require(accountId, bucketName);
    await this.#store.deleteCors(bucket.id);
  }

  /** The rules to apply to a request for this bucket (undefined: none, so no CORS headers). */
  rulesOf(bucket: BucketRecord): Promise<CorsRule[] | undefined> {
    return this.#store.getCors(bucket.id);
  }
}
