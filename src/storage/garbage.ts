import type { BlobStore } from './blob-store.ts';
import type { Logger } from '../shared/logger.ts';

/**
 * Deletes blobs that no record references any more (overwritten or deleted objects, aborted parts)
 * after a short grace period, so a reader that fetched the old record just before the change can still
 * open the blob. A crash before the deletion leaves an orphan, which the start-up collection removes.
 */
export class BlobGarbage {
  readonly #blobs: BlobStore;
  readonly #graceMs: number;
  readonly #logger: Logger | undefined;
  readonly #pending = new Map<NodeJS.Timeout, string[]>();
  /** Deletions under way: a flush waits for them too (an S3 DeleteObjects takes a round trip or more). */
  readonly #deleting = new Set<Promise<void>>();

  constructor(blobs: BlobStore, options: { graceMs: number; logger?: Logger | undefined }) {
    this.#blobs = blobs;
    this.#graceMs = options.graceMs;
    this.#logger = options.logger;
  }

  discard(blobIds: readonly string[]): void {
    if (blobIds.length === 0) return;
    const ids = [...blobIds];
    const timer = setTimeout(() => {
      this.#pending.delete(timer);
      void this.#track(this.#delete(ids));
    }, this.#graceMs);
    timer.unref();
    this.#pending.set(timer, ids);
  }

  /** Deletes everything still waiting and waits for deletions already under way (on shutdown). */
  async flush(): Promise<void> {
    const batches = [...this.#pending.entries()];
    this.#pending.clear();
    for (const [timer] of batches) clearTimeout(timer);
    await Promise.all([...batches.map(([, ids]) => this.#delete(ids)), ...this.#deleting]);
  }

  #track(deletion: Promise<void>): Promise<void> {
    this.#deleting.add(deletion);
    return deletion.finally(() => this.#deleting.delete(deletion));
  }

  async #delete(ids: string[]): Promise<void> {
    try {
      await this.#blobs.delete(ids);
    } catch (error) {
      this.#logger?.warn('could not delete discarded blobs (start-up collection will retry)', { err: error });
    }
  }
}
