import type { JobGate } from '../shared/background-service.ts';
import type { Clock } from '../shared/clock.ts';
import { PeriodicJob } from '../shared/periodic-job.ts';
import type { Logger } from '../shared/logger.ts';
import type { BucketService } from './bucket-service.ts';
import { R2Errors } from './errors.ts';
import type { BlobGarbage } from './garbage.ts';
import { applyLifecycleRules, type LifecycleResult } from './lifecycle.ts';
import { assertLifecycleRules, type LifecycleRule } from './lifecycle-rules.ts';
import type { MetadataStore } from './metadata-store.ts';

/**
 * Bucket lifecycle rules: stored per bucket (`get`/`put`), applied by a background job every
 * `intervalMs` (LEDGE_R2_LIFECYCLE_INTERVAL_MS, hourly by default; R2 applies rules within a day).
 * A BackgroundService: the platform starts it after the API listens.
 */
export class LifecycleService {
  readonly name = 'r2-lifecycle';
  readonly #store: MetadataStore;
  readonly #buckets: BucketService;
  readonly #garbage: BlobGarbage;
  readonly #clock: Clock;
  /** Passes on the clock; with several nodes one at a time runs them (a lease of 1.5 intervals). */
  readonly #job: PeriodicJob;
  #running: Promise<LifecycleResult> | undefined;

  constructor(options: {
    store: MetadataStore;
    buckets: BucketService;
    garbage: BlobGarbage;
    intervalMs: number;
    logger?: Logger | undefined;
    /** With several nodes, one at a time applies the rules. */
    gate?: JobGate | undefined;
    /** Object ages are measured on it, and the passes run on it (tests advance their own). */
    clock: Clock;
  }) {
    this.#store = options.store;
    this.#buckets = options.buckets;
    this.#garbage = options.garbage;
    this.#clock = options.clock;
    const logger = options.logger;
    this.#job = new PeriodicJob({
      name: this.name,
      everyMs: options.intervalMs,
      firstAfterMs: 0,
      clock: this.#clock,
      logger,
      gate: options.gate,
      run: async () => {
        const result = await this.run();
        if (result.deleted + result.aborted + result.transitioned > 0) logger?.info('lifecycle applied', { ...result });
      },
    });
  }

  async get(accountId: string, bucketName: string): Promise<LifecycleRule[]> {
    const bucket = await this.#buckets.require(accountId, bucketName);
    return this.#store.getLifecycle(bucket.id);
  }

  /** Replaces the bucket's whole rule set (what R2's PUT does). */
  async put(accountId: string, bucketName: string, rules: LifecycleRule[]): Promise<void> {
    assertLifecycleRules(rules);
    const bucket = await this.#buckets.require(accountId, bucketName);
    if (!(await this.#store.putLifecycle(bucket.id, rules))) throw R2Errors.noSuchBucket(bucketName);
  }

  /** One pass over every bucket's rules as of `now`; passes never overlap (this one waits for a running one). */
  run(now = this.#clock.now()): Promise<LifecycleResult> {
    const previous = this.#running?.catch(() => undefined) ?? Promise.resolve();
    const pass = previous.then(() => applyLifecycleRules(this.#store, this.#garbage, now));
    this.#running = pass;
    const clear = () => {
      if (this.#running === pass) this.#running = undefined;
    };
    pass.then(clear, clear);
    return pass;
  }

  /** A first pass right away (rules may have come due while the server was down), then one per interval. */
  start(): void {
    this.#job.start();
  }

  async stop(): Promise<void> {
    await this.#job.stop();
    await this.#running?.catch(() => undefined);
  }
}
