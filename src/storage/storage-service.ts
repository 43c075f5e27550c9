import { type ObjectChanges, watchedStore } from './object-changes.ts';
import { alwaysRun, type JobGate } from '../shared/background-service.ts';
import type { Clock } from '../shared/clock.ts';
import { PeriodicJob } from '../shared/periodic-job.ts';
import type { Logger } from '../shared/logger.ts';
import { blobNamespace, type BlobStore } from './blob-store.ts';
import { BucketService } from './bucket-service.ts';
import { CorsService } from './cors-service.ts';
import { BlobGarbage } from './garbage.ts';
import { R2_LIMITS } from './limits.ts';
import { LifecycleService } from './lifecycle-service.ts';
import { collectOrphans, expireUploads } from './maintenance.ts';
import type { MetadataStore } from './metadata-store.ts';
import { MultipartService } from './multipart-service.ts';
import { listObjects, type ListOptions, type ListResult } from './object-listing.ts';
import { ObjectService } from './object-service.ts';
import type { BucketRecord } from './types.ts';

export interface StorageOptions {
  logger?: Logger | undefined;
  /** How long a discarded blob stays readable for in-flight readers. */
  garbageGraceMs?: number | undefined;
  uploadTtlMs?: number | undefined;
  sweepIntervalMs?: number | undefined;
  /** How often the lifecycle job applies bucket rules (default hourly). */
  lifecycleIntervalMs?: number | undefined;
  /** Blobs older than this and unreferenced are orphans of a previous process (default: construction time). */
  bootTime?: number | undefined;
  /**
   * Set when other nodes share the blob store: an unreferenced blob is an orphan only once it is this old (a
   * blob another node just wrote is unreferenced until its upload commits), and orphans are also collected
   * by the hourly sweep, since no node's start is a moment when no upload is in flight.
   */
  sharedOrphanAgeMs?: number | undefined;
  /** One node at a time runs the sweeps and the lifecycle job (default: this node always). */
  gate?: JobGate | undefined;
  /**
   * Set when this process is the only writer of the store (the embedded SQLite database): objects may then be
   * cached outside it, with every write told to `objectChanges` before it is answered (object-changes.ts).
   */
  objectChanges?: ObjectChanges | undefined;
  /** The sweeps and the lifecycle job run on it, and measure ages with it (tests advance their own). */
  clock: Clock;
}

/**
 * The object-storage engine: buckets, objects and multipart uploads on top of a MetadataStore and a
 * BlobStore. Transport-neutral: the /client/v4 routes and the workerd wire backend both call it.
 *
 * For other subsystems: `storage.getBucket(accountId, name)` answers whether a bucket exists (the
 * workers deploy refuses a binding to a missing bucket with it).
 */
export class StorageService {
  readonly buckets: BucketService;
  readonly objects: ObjectService;
  readonly multipart: MultipartService;
  /** Lifecycle rules per bucket and the background job that applies them (registered by the platform). */
  readonly lifecycle: LifecycleService;
  /** Bucket CORS rules (the /cors routes, S3's *BucketCors) and what the S3 endpoint and public buckets apply. */
  readonly cors: CorsService;
  readonly #store: MetadataStore;
  readonly #blobs: BlobStore;
  readonly #garbage: BlobGarbage;
  /** Undefined unless this process is the store's only writer: see StorageOptions.objectChanges. */
  readonly objectChanges: ObjectChanges | undefined;
  readonly #options: Required<Omit<StorageOptions, 'logger' | 'sharedOrphanAgeMs' | 'objectChanges'>> & {
    logger: Logger | undefined;
    sharedOrphanAgeMs: number | undefined;
  };
  readonly #sweep: PeriodicJob;

  constructor(unwatched: MetadataStore, blobs: BlobStore, options: StorageOptions) {
    this.objectChanges = options.objectChanges;
    const store = options.objectChanges ? watchedStore(unwatched, options.objectChanges) : unwatched;
    this.#store = store;
    this.#blobs = blobs;
    this.#options = {
      logger: options.logger,
      garbageGraceMs: options.garbageGraceMs ?? 2_000,
      uploadTtlMs: options.uploadTtlMs ?? R2_LIMITS.uploadTtlMs,
      sweepIntervalMs: options.sweepIntervalMs ?? 3600_000,
      lifecycleIntervalMs: options.lifecycleIntervalMs ?? 3600_000,
      bootTime: options.bootTime ?? options.clock.now(),
      sharedOrphanAgeMs: options.sharedOrphanAgeMs,
      gate: options.gate ?? alwaysRun,
      clock: options.clock,
    };
    this.#sweep = new PeriodicJob({
      name: 'r2-sweep',
      everyMs: this.#options.sweepIntervalMs,
      clock: this.#options.clock,
      logger: options.logger,
      run: () => this.#sweepOnce(false),
    });
    this.#garbage = new BlobGarbage(blobs, { graceMs: this.#options.garbageGraceMs, logger: options.logger });
    this.buckets = new BucketService(store, this.#garbage, this.#options.clock);
    this.objects = new ObjectService(store, blobs, this.#garbage, this.#options.clock);
    this.multipart = new MultipartService(store, blobs, this.#garbage, this.#options.clock);
    this.cors = new CorsService(store, this.buckets);
    this.lifecycle = new LifecycleService({
      store,
      buckets: this.buckets,
      garbage: this.#garbage,
      intervalMs: this.#options.lifecycleIntervalMs,
      logger: options.logger,
      gate: this.#options.gate,
      clock: this.#options.clock,
    });
  }

  /** The bucket of an account, or undefined. */
  getBucket(accountId: string, name: string): Promise<BucketRecord | undefined> {
    return this.buckets.get(accountId, name);
  }

  list(bucket: BucketRecord, options: ListOptions): Promise<ListResult> {
    return listObjects(this.#store, bucket, options);
  }

  /**
   * Start-up work (orphans of a crashed process, expired uploads) and the periodic sweep (expiry; orphans too
   * when the blob store is shared). With several nodes, one of them at a time sweeps.
   */
  async start(): Promise<void> {
    await this.#sweepOnce(true);
    this.#sweep.start();
  }

  async #sweepOnce(starting: boolean): Promise<void> {
    const { sharedOrphanAgeMs, sweepIntervalMs, gate, logger } = this.#options;
    if (!(await gate('r2-sweep', sweepIntervalMs * 1.5))) return;
    if (starting || sharedOrphanAgeMs !== undefined) {
      const cutoff =
        sharedOrphanAgeMs === undefined ? this.#options.bootTime : this.#options.clock.now() - sharedOrphanAgeMs;
      const collected = await collectOrphans(this.#store, this.#blobs, cutoff);
      if (collected.orphans + collected.temporary > 0) logger?.info('collected orphaned blobs', collected);
    }
    await this.expireUploads();
  }

  async stop(): Promise<void> {
    await this.#sweep.stop();
    await this.#garbage.flush();
  }

  /** Aborts uploads older than the TTL; returns how many. */
  expireUploads(now = this.#options.clock.now()): Promise<number> {
    return expireUploads(this.#store, this.#garbage, now - this.#options.uploadTtlMs);
  }

  /**
   * The directory of a bucket's blobs when they are files on this machine (the embedded store), for
   * a reader that opens them itself (the functions runtime: see R2WireBackend.localReads); undefined otherwise.
   */
  bucketBlobDirectory(accountId: string, bucketName: string): string | undefined {
    return this.#blobs.namespaceRoot?.(blobNamespace({ accountId, name: bucketName }));
  }

  /** Deletes discarded blobs now instead of after the grace period (shutdown, tests). */
  flushGarbage(): Promise<void> {
    return this.#garbage.flush();
  }
}
