import type { BlobGarbage } from './garbage.ts';
import { conditionHoldsAt, type LifecycleRule } from './lifecycle-rules.ts';
import type { MetadataStore } from './metadata-store.ts';
import type { BucketRecord, ObjectRecord } from './types.ts';

/** Objects read per listing page, and changed per transaction (small, so writers never wait long). */
const PAGE = 500;
const BATCH = 100;

export interface LifecycleResult {
  deleted: number;
  aborted: number;
  transitioned: number;
}

/**
 * Applies every bucket's enabled lifecycle rules once, as of `now`: expires objects, aborts old
 * multipart uploads, moves objects to InfrequentAccess. Each change is a small transaction that
 * re-checks the object's version, so an object overwritten after it was read here is left alone.
 */
export async function applyLifecycleRules(
  store: MetadataStore,
  garbage: BlobGarbage,
  now: number,
): Promise<LifecycleResult> {
  const result: LifecycleResult = { deleted: 0, aborted: 0, transitioned: 0 };
  for (const { bucket, rules } of await store.bucketsWithLifecycle()) {
    for (const rule of rules) {
      if (!rule.enabled) continue;
      await applyRule(store, garbage, bucket, rule, now, result);
    }
  }
  return result;
}

async function applyRule(
  store: MetadataStore,
  garbage: BlobGarbage,
  bucket: BucketRecord,
  rule: LifecycleRule,
  now: number,
  result: LifecycleResult,
): Promise<void> {
  const prefix = rule.conditions?.prefix ?? '';
  const expire = rule.deleteObjectsTransition?.condition;
  const transitions = rule.storageClassTransitions ?? [];
  if (expire || transitions.length > 0) {
    for await (const page of objectPages(store, bucket.id, prefix)) {
      const doomed = page.filter((o) => conditionHoldsAt(expire, o.uploaded, now));
      for (const batch of chunks(doomed, BATCH)) {
        const removed = await store.deleteObjectVersions(bucket.id, batch);
        garbage.discard(removed.flatMap((o) => o.segments.map((s) => s.blobId)));
        result.deleted += removed.length;
      }
      const kept = new Set(doomed);
      const moving = page.filter(
        (o) =>
          !kept.has(o) &&
          o.storageClass !== 'InfrequentAccess' &&
          transitions.some((t) => conditionHoldsAt(t.condition, o.uploaded, now)),
      );
      for (const batch of chunks(moving, BATCH)) {
        result.transitioned += await store.setObjectStorageClass(bucket.id, batch, 'InfrequentAccess');
      }
    }
  }
  const abort = rule.abortMultipartUploadsTransition?.condition;
  if (abort) {
    const cutoff = now - abort.maxAge * 1000;
    for (;;) {
      // Strictly older than the age: an upload aborted is gone from the next page.
      const uploads = await store.bucketUploadsCreatedBefore(bucket.id, prefix, cutoff + 1, BATCH);
      if (uploads.length === 0) break;
      for (const upload of uploads) {
        const parts = await store.abortUpload(bucket.id, upload.uploadId);
        if (parts) {
          garbage.discard(parts.map((p) => p.blobId));
          result.aborted++;
        }
      }
    }
  }
}

async function* objectPages(store: MetadataStore, bucketId: string, prefix: string): AsyncGenerator<ObjectRecord[]> {
  let startAfter: string | undefined;
  for (;;) {
    const page = await store.listObjects(bucketId, { prefix, startAfter, limit: PAGE });
    if (page.length === 0) return;
    yield page;
    if (page.length < PAGE) return;
    startAfter = page[page.length - 1]?.key;
  }
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
