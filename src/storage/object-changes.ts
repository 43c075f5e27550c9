import type { MetadataStore } from './metadata-store.ts';
import type { BucketRecord } from './types.ts';

/** A bucket as the listeners of ObjectChanges name it (the runtime's caches know buckets by account and name). */
export interface ChangedBucket {
  id: string;
  accountId: string;
  name: string;
}

/** Called after a write to watched keys commits and before the write is answered; the answer waits for it. */
export type ObjectChangeListener = (bucket: ChangedBucket, keys: string[]) => Promise<void>;

/**
 * Which objects someone outside this process may hold a copy of (the functions runtime's per-isolate
 * cache of small objects, issue 31), and the hook that tells them when one changes.
 *
 * Read-after-write: a reader calls `watch` *before* it reads the object it will hand out for caching, and
 * every write to the object store (`watchedStore`: puts, deletes, multipart completions, lifecycle
 * expiry and transitions, whatever door they came through) calls `changed` after its commit and before it
 * returns. So a write either commits before the read (the read sees it) or finds the key watched and
 * waits until every listener has dropped the copies. A watched key is forgotten once invalidated: a copy
 * made from a read that raced the invalidation is refused by the reader itself (see r2-cache.js).
 *
 * Only for a store no other process writes to (the embedded SQLite database): with PostgreSQL other
 * nodes commit writes this process never sees, so nothing may be cached there.
 */
export class ObjectChanges {
  readonly #watched = new Map<string, { bucket: ChangedBucket; keys: Set<string> }>();
  readonly #listeners: ObjectChangeListener[] = [];

  /** Listeners are awaited together; a listener that throws fails the write's answer (not its commit). */
  onChange(listener: ObjectChangeListener): void {
    this.#listeners.push(listener);
  }

  watch(bucket: BucketRecord, key: string): void {
    let entry = this.#watched.get(bucket.id);
    if (!entry) {
      entry = { bucket: { id: bucket.id, accountId: bucket.accountId, name: bucket.name }, keys: new Set() };
      this.#watched.set(bucket.id, entry);
    }
    entry.keys.add(key);
  }

  /** How many keys are watched now (tests, observability). */
  get watchedKeys(): number {
    let count = 0;
    for (const entry of this.#watched.values()) count += entry.keys.size;
    return count;
  }

  async changed(bucketId: string, keys: Iterable<string>): Promise<void> {
    const entry = this.#watched.get(bucketId);
    if (!entry) return;
    const hit: string[] = [];
    for (const key of keys) if (entry.keys.delete(key)) hit.push(key);
    if (entry.keys.size === 0) this.#watched.delete(bucketId);
    if (hit.length === 0 || this.#listeners.length === 0) return;
    await Promise.all(this.#listeners.map((listener) => listener(entry.bucket, hit)));
  }
}

/**
 * The store with every object write reported to `changes` after it commits (and before the caller goes on).
 * The five methods below are all that change `r2_objects` (sql-metadata-store.ts); the rest pass through.
 */
export function watchedStore(store: MetadataStore, changes: ObjectChanges): MetadataStore {
  const overrides: Partial<MetadataStore> = {
    async commitObject(object, precondition) {
      const result = await store.commitObject(object, precondition);
      if (result.status === 'committed') await changes.changed(object.bucketId, [object.key]);
      return result;
    },
    async deleteObjects(bucketId, keys) {
      const removed = await store.deleteObjects(bucketId, keys);
      await changes.changed(bucketId, keys);
      return removed;
    },
    async completeUpload(bucketId, uploadId, build) {
      const result = await store.completeUpload(bucketId, uploadId, build);
      if (result.status === 'completed') await changes.changed(bucketId, [result.object.key]);
      return result;
    },
    async deleteObjectVersions(bucketId, targets) {
      const removed = await store.deleteObjectVersions(bucketId, targets);
      await changes.changed(
        bucketId,
        targets.map((t) => t.key),
      );
      return removed;
    },
    async setObjectStorageClass(bucketId, targets, storageClass) {
      const changedCount = await store.setObjectStorageClass(bucketId, targets, storageClass);
      await changes.changed(
        bucketId,
        targets.map((t) => t.key),
      );
      return changedCount;
    },
  };
  return new Proxy(store, {
    get(target, property, receiver) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof MetadataStore];
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
