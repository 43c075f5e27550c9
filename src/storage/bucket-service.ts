import { newId } from '../shared/ids.ts';
import type { Clock } from '../shared/clock.ts';
import { R2Errors } from './errors.ts';
import type { BlobGarbage } from './garbage.ts';
import type { BucketUsage, MetadataStore } from './metadata-store.ts';
import type { BucketRecord, StorageClass } from './types.ts';
import { assertBucketName } from './validation.ts';

export const LOCATION_HINTS = ['apac', 'eeur', 'enam', 'weur', 'wnam', 'oc'] as const;
export const JURISDICTIONS = ['default', 'eu', 'fedramp'] as const;

export interface CreateBucketInput {
  name: string;
  locationHint?: string | undefined;
  storageClass?: StorageClass | undefined;
  jurisdiction?: string | undefined;
}

export interface BucketListOptions {
  nameContains?: string | undefined;
  startAfter?: string | undefined;
  cursor?: string | undefined;
  direction: 'asc' | 'desc';
  perPage: number;
}

/** Bucket records kept in memory at most (a full cache starts over). */
const CACHED_BUCKETS = 10_000;

/**
 * Buckets of an account: names are unique per account (two accounts may use the same name).
 *
 * Lookups by name are cached: every binding call resolves its bucket first, and the query was ~10% of
 * the wire backend's CPU per small GET. Sound because every bucket change goes through this service
 * in this process (the cache is updated around each one); with several nodes on one database, each node
 * announces its changes (`onChanged`) and forgets the buckets others changed (`forget`). A stale entry could
 * only name a bucket that was just deleted, and object commits check that the bucket still exists in their
 * transaction.
 */
export class BucketService {
  readonly #store: MetadataStore;
  readonly #garbage: BlobGarbage;
  readonly #cache = new Map<string, BucketRecord>();
  readonly #changed: Array<(accountId: string, name: string) => void> = [];

  readonly #clock: Clock;

  constructor(store: MetadataStore, garbage: BlobGarbage, clock: Clock) {
    this.#clock = clock;
    this.#store = store;
    this.#garbage = garbage;
  }

  async create(accountId: string, input: CreateBucketInput): Promise<BucketRecord> {
    assertBucketName(input.name);
    const hint = input.locationHint?.toLowerCase();
    if (hint !== undefined && !(LOCATION_HINTS as readonly string[]).includes(hint)) {
      throw R2Errors.invalidArgument(`locationHint must be one of ${LOCATION_HINTS.join(', ')}`);
    }
    const jurisdiction = input.jurisdiction ?? 'default';
    if (!(JURISDICTIONS as readonly string[]).includes(jurisdiction)) {
      throw R2Errors.invalidArgument(`jurisdiction must be one of ${JURISDICTIONS.join(', ')}`);
    }
    const bucket: BucketRecord = {
      id: newId(),
      accountId,
      name: input.name,
      createdAt: this.#clock.now(),
      location: hint ?? 'enam',
      storageClass: input.storageClass ?? 'Standard',
      jurisdiction,
    };
    if (!(await this.#store.createBucket(bucket))) throw R2Errors.bucketExists(input.name);
    this.#remember(bucket);
    return bucket;
  }

  /** The bucket, or undefined (the workers deploy uses this to refuse bindings to missing buckets). */
  async get(accountId: string, name: string): Promise<BucketRecord | undefined> {
    const cached = this.#cache.get(cacheKey(accountId, name));
    if (cached) return cached;
    const bucket = await this.#store.getBucket(accountId, name);
    if (bucket) this.#remember(bucket);
    return bucket;
  }

  async require(accountId: string, name: string): Promise<BucketRecord> {
    const bucket = await this.get(accountId, name);
    if (!bucket) throw R2Errors.noSuchBucket(name);
    return bucket;
  }

  /** What the bucket holds now (R2's storage analytics, answered from the metadata). */
  async usage(accountId: string, name: string): Promise<BucketUsage> {
    return this.#store.bucketUsage((await this.require(accountId, name)).id);
  }

  /** One page in name order; `cursor` is set when more buckets follow. */
  async list(
    accountId: string,
    options: BucketListOptions,
  ): Promise<{ buckets: BucketRecord[]; cursor: string | undefined }> {
    const after = options.cursor !== undefined ? decodeBucketCursor(options.cursor) : options.startAfter;
    const rows = await this.#store.listBuckets(accountId, {
      nameContains: options.nameContains,
      after,
      direction: options.direction,
      limit: options.perPage + 1,
    });
    const buckets = rows.slice(0, options.perPage);
    const last = buckets[buckets.length - 1];
    const cursor =
      rows.length > options.perPage && last ? Buffer.from(last.name, 'utf8').toString('base64url') : undefined;
    return { buckets, cursor };
  }

  async update(accountId: string, name: string, patch: { storageClass?: StorageClass }): Promise<BucketRecord> {
    this.#cache.delete(cacheKey(accountId, name));
    const bucket = await this.#store.updateBucket(accountId, name, patch);
    if (!bucket) throw R2Errors.noSuchBucket(name);
    this.#remember(bucket);
    this.#announce(accountId, name);
    return bucket;
  }

  /** Only an empty bucket can be deleted; its unfinished multipart uploads go with it. */
  async delete(accountId: string, name: string): Promise<void> {
    this.#cache.delete(cacheKey(accountId, name));
    const result = await this.#store.deleteBucket(accountId, name);
    // Again after the store: a lookup between the two may have cached the record being deleted.
    this.#cache.delete(cacheKey(accountId, name));
    if (result.status === 'deleted') this.#announce(accountId, name);
    if (result.status === 'missing') throw R2Errors.noSuchBucket(name);
    if (result.status === 'not-empty') throw R2Errors.bucketNotEmpty(name);
    this.#garbage.discard(result.discardedParts.map((p) => p.blobId));
  }

  /** Called after a bucket was changed or deleted here (so other nodes can forget it). */
  onChanged(listener: (accountId: string, name: string) => void): void {
    this.#changed.push(listener);
  }

  /** Drops a cached bucket (another node changed or deleted it). */
  forget(accountId: string, name: string): void {
    this.#cache.delete(cacheKey(accountId, name));
  }

  #announce(accountId: string, name: string): void {
    for (const listener of this.#changed) listener(accountId, name);
  }

  #remember(bucket: BucketRecord): void {
    if (this.#cache.size >= CACHED_BUCKETS) this.#cache.clear();
    this.#cache.set(cacheKey(bucket.accountId, bucket.name), bucket);
  }
}

const cacheKey = (accountId: string, name: string) => `${accountId}/${name}`;

function decodeBucketCursor(cursor: string): string {
  const name = Buffer.from(cursor, 'base64url').toString('utf8');
  if (name === '' || Buffer.from(name, 'utf8').toString('base64url') !== cursor) {
    throw R2Errors.invalidArgument('cursor is not valid: pass result_info.cursor from the previous page');
  }
  return name;
}
