import type { MetadataStore } from './metadata-store.ts';
import type { BucketRecord } from './types.ts';

/** A bucket as the listeners of ObjectChanges name it (the runtime's caches know buckets by account and name). */
export interface ChangedBucket {
  id: string;
  accountId: string;
  name: string;
}

/**
 * Called after a write to watched keys (or to a bucket whose listings are watched) commits and before the
 * write is answered; the answer waits for it. `keys`: the watched keys it changed (maybe none); `lists`: every
 * listing of the bucket must go too. `bucket` and `keys` undefined: every copy of every object and listing must
 * go (see ObjectChanges.maxWatched).
 */
export type ObjectChangeListener = (
  bucket: ChangedBucket | undefined,
  keys: string[] | undefined,
  lists?: boolean,
) => Promise<void>;

/** Per bucket: its watched keys, and whether a listing of it may be held (any write then changes it). */
interface Watched {
  bucket: ChangedBucket;
  keys: Set<string>;
  lists: boolean;
}

/** Keys watched at once before everything is dropped everywhere and watching starts afresh. */
const MAX_WATCHED_KEYS = 100_000;

/**
 * Which objects someone outside this process may hold a copy of (the functions runtime's per-isolate
 * cache of small objects), and the hook that tells them when one changes.
 *
 * Read-after-write: a reader calls `watch` *before* it reads the object it will hand out for caching, and
 * every write to the object store (`watchedStore`: puts, deletes, multipart completions, lifecycle
 * expiry and transitions, whatever door they came through) calls `changed` after its commit and before it
 * returns. So a write either commits before the read (the read sees it) or finds the key watched and
 * waits until every listener has dropped the copies. A watched key is forgotten once invalidated: a copy
 * made from a read that raced the invalidation is refused by the reader itself (see isolate/r2-cache.ts).
 *
 * Listings are watched per bucket (`watchLists`, before a listing is read): every write to any object of the
 * bucket changes some listing, so the next such write waits until every listing of the bucket is dropped, and
 * then the bucket is forgotten until it is listed again. A bucket nobody listed costs its writes nothing.
 *
 * Only for a store no other process writes to (the embedded SQLite database): with PostgreSQL other
 * nodes commit writes this process never sees, so nothing may be cached there.
 */
export class ObjectChanges {
  #watched = new Map<string, Watched>();
  #count = 0;
  /** Watches made before a reset still in flight: writes still wait for them until every copy is gone. */
  #previous: Map<string, Watched> | undefined;
  readonly #listeners: ObjectChangeListener[] = [];
  readonly #maxWatched: number;

  /**
   * `maxWatched` bounds the memory of the watch list: past it, every holder drops everything (one
   * invalidation with no keys) while a new list starts, and the old one is forgotten once that is done.
   */
  constructor(maxWatched = MAX_WATCHED_KEYS) {
    this.#maxWatched = maxWatched;
  }

  /** Listeners are awaited together; a listener that throws fails the write's answer (not its commit). */
  onChange(listener: ObjectChangeListener): void {
    this.#listeners.push(listener);
  }

  watch(bucket: BucketRecord, key: string): void {
    const entry = this.#entry(bucket);
    if (entry.keys.has(key)) return;
    entry.keys.add(key);
    if (++this.#count > this.#maxWatched && this.#previous === undefined) void this.#reset();
  }

  /** Before a listing of `bucket` is read for a holder outside this process: the next write to it waits. */
  watchLists(bucket: BucketRecord): void {
    this.#entry(bucket).lists = true;
  }

  #entry(bucket: BucketRecord): Watched {
    let entry = this.#watched.get(bucket.id);
    if (!entry) {
      const changed = { id: bucket.id, accountId: bucket.accountId, name: bucket.name };
      entry = { bucket: changed, keys: new Set(), lists: false };
      this.#watched.set(bucket.id, entry);
    }
    return entry;
  }

  /** How many keys are watched now (tests, observability). */
  get watchedKeys(): number {
    return this.#count;
  }

  /**
   * Whether a write to these keys of the bucket has to call `changed` (and wait for it): false when no copy
   * of any of them, nor a listing of the bucket, can exist, so that the writes nobody caches cost no extra
   * promise (the common case: small-request throughput is measured with nothing cached).
   */
  concerns(bucketId: string, keys: Iterable<string>): boolean {
    const current = this.#watched.get(bucketId);
    const previous = this.#previous?.get(bucketId);
    if (current === undefined && previous === undefined) return false;
    if (current?.lists || previous?.lists) return true;
    for (const key of keys) if (current?.keys.has(key) || previous?.keys.has(key)) return true;
    return false;
  }

  async changed(bucketId: string, keys: Iterable<string>): Promise<void> {
    const lists = this.#previous ? [this.#watched, this.#previous] : [this.#watched];
    let bucket: ChangedBucket | undefined;
    const hit = new Set<string>();
    let listed = false;
    for (const watched of lists) {
      const entry = watched.get(bucketId);
      if (!entry) continue;
      bucket = entry.bucket;
      if (entry.lists) {
        listed = true;
        entry.lists = false;
      }
      for (const key of keys) {
        if (!entry.keys.delete(key)) continue;
        hit.add(key);
        if (watched === this.#watched) this.#count--;
      }
      if (entry.keys.size === 0 && !entry.lists) watched.delete(bucketId);
    }
    if (bucket === undefined || (hit.size === 0 && !listed) || this.#listeners.length === 0) return;
    await Promise.all(this.#listeners.map((listener) => listener(bucket, [...hit], listed)));
  }

  /**
   * After a bucket is deleted: its listings go (they were of an empty bucket, and a bucket created again
   * under the name has another id, whose writes would not find them).
   */
  async bucketDeleted(accountId: string, name: string): Promise<void> {
    for (const watched of this.#previous ? [this.#watched, this.#previous] : [this.#watched])
      for (const entry of watched.values())
        if (entry.bucket.accountId === accountId && entry.bucket.name === name) await this.changed(entry.bucket.id, []);
  }

  /** Drops every copy everywhere, then forgets the watches made before it started. */
  async #reset(): Promise<void> {
    this.#previous = this.#watched;
    this.#watched = new Map();
    this.#count = 0;
    try {
      await Promise.all(this.#listeners.map((listener) => listener(undefined, undefined)));
    } finally {
      this.#previous = undefined;
    }
  }
}

/**
 * The store with every object write reported to `changes` after it commits (and before the caller goes on).
 * The five object methods below are all that change `r2_objects` (sql-metadata-store.ts), and deleteBucket ends
 * a bucket's listings; the rest are the store's own, bound once. A plain object rather than a Proxy: a Proxy's
 * trap ran on every method lookup of every request, and each write awaited `changed` even with nothing watched
 * (PUT 1 KiB: +6% Node CPU against the build before the cache); now a write that concerns
 * no copy only pays `concerns`.
 */
export function watchedStore(store: MetadataStore, changes: ObjectChanges): MetadataStore {
  /**
   * `result` once every copy of the keys is gone, or `result` itself when no copy (nor listing) can exist:
   * no promise for the writes nobody caches.
   */
  const reported = <T>(result: T, bucketId: string, keys: string[]): T | Promise<T> =>
    changes.concerns(bucketId, keys) ? changes.changed(bucketId, keys).then(() => result) : result;
  const overrides: Pick<
    MetadataStore,
    | 'deleteBucket'
    | 'commitObject'
    | 'deleteObjects'
    | 'completeUpload'
    | 'deleteObjectVersions'
    | 'setObjectStorageClass'
  > = {
    async deleteBucket(accountId, name) {
      const result = await store.deleteBucket(accountId, name);
      if (result.status === 'deleted') await changes.bucketDeleted(accountId, name);
      return result;
    },
    async commitObject(object, precondition) {
      const result = await store.commitObject(object, precondition);
      return result.status === 'committed' ? reported(result, object.bucketId, [object.key]) : result;
    },
    async deleteObjects(bucketId, keys) {
      const removed = await store.deleteObjects(bucketId, keys);
      return reported(removed, bucketId, [...keys]);
    },
    async completeUpload(bucketId, uploadId, build) {
      const result = await store.completeUpload(bucketId, uploadId, build);
      return result.status === 'completed' ? reported(result, bucketId, [result.object.key]) : result;
    },
    async deleteObjectVersions(bucketId, targets) {
      const removed = await store.deleteObjectVersions(bucketId, targets);
      return reported(
        removed,
        bucketId,
        targets.map((t) => t.key),
      );
    },
    async setObjectStorageClass(bucketId, targets, storageClass) {
      const changedCount = await store.setObjectStorageClass(bucketId, targets, storageClass);
      return reported(
        changedCount,
        bucketId,
        targets.map((t) => t.key),
      );
    },
  };
  const wrapped: Record<string, unknown> = {};
  for (let proto: object | null = store; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor' || name in wrapped) continue;
      const value = (store as unknown as Record<string, unknown>)[name];
      if (typeof value === 'function') wrapped[name] = (value as (...args: unknown[]) => unknown).bind(store);
    }
  }
  return Object.assign(wrapped, overrides) as unknown as MetadataStore;
}
