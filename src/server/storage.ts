import type { Cluster } from '../cluster/index.ts';
import type { Logger } from '../shared/logger.ts';
import { FsBlobStore, S3BlobStore, type BlobStore, type StorageService } from '../storage/index.ts';
import type { ServerConfig } from './config.ts';

// The storage engine as the platform opens it: its blob store, and with several nodes its bucket cache shared.

/** Bucket changes reach every node's bucket cache (a deleted bucket is forgotten everywhere at once). */
export function shareBucketChanges(storage: StorageService, cluster: Cluster): void {
  if (!cluster.shared) return;
  storage.buckets.onChanged((accountId, name) => cluster.announce('r2_buckets', JSON.stringify([accountId, name])));
  cluster.onRemote('r2_buckets', (key) => {
    const parsed: unknown = JSON.parse(key);
    if (Array.isArray(parsed) && typeof parsed[0] === 'string' && typeof parsed[1] === 'string') {
      storage.buckets.forget(parsed[0], parsed[1]);
    }
  });
}

/**
 * With blobs on S3, an unreferenced blob or unfinished upload is an orphan only once it is this old, by the
 * service's clock (LastModified, Initiated), for the start-up collection and the hourly sweep alike (one node at a
 * time): other nodes share the bucket with writes under way, unreferenced until they commit, and the service's
 * clock is not ours. Only a single write lasting more than a day could be taken.
 */
export const SHARED_STORE_MARGIN_MS = 24 * 3600_000;

/**
 * The blob store the configuration names: S3 (its bucket checked, and created when missing, so a wrong
 * endpoint or key fails the start with a message) or files under `<data-dir>/blobs`.
 */
export async function openBlobStore(config: ServerConfig, blobsDir: string, logger: Logger): Promise<BlobStore> {
  if (!config.s3) return new FsBlobStore(blobsDir);
  const store = new S3BlobStore(config.s3);
  try {
    await store.ensureBucket();
  } catch (error) {
    store.close();
    throw error;
  }
  // Where, never with which key.
  logger.info('blobs on S3', {
    endpoint: config.s3.endpoint ?? `aws:${config.s3.region}`,
    bucket: config.s3.bucket,
    prefix: config.s3.prefix,
  });
  return store;
}

/**
 * Where static assets of Workers keep their bytes: beside the engine's blobs, never among them (the storage
 * engine's orphan collection removes what its objects do not name): files under `<data-dir>/assets`, or the
 * same S3 bucket under `<prefix>assets/`, whose keys the engine's store does not take for its own.
 */
export function openAssetBlobStore(config: ServerConfig, assetsDir: string): BlobStore {
  if (!config.s3) return new FsBlobStore(assetsDir);
  return new S3BlobStore({ ...config.s3, prefix: `${config.s3.prefix}assets/` });
}
