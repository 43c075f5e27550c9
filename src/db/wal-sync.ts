import { closeSync, fdatasync, openSync } from 'node:fs';

/**
 * Group commit for SQLite's WAL: `durable()` resolves once every transaction committed before the call
 * is on disk (survives a power loss, as with `synchronous=FULL`). Concurrent callers share syncs: while
 * one runs, later callers wait for a single next one, so N commits cost far fewer than N fsyncs and the
 * event loop never blocks on them. Sound because SQLite writes WAL frames with write() at commit and
 * only deletes the WAL file when the last connection closes (the writer stays open until close()).
 */
export class WalSync {
  readonly #walPath: string | undefined;
  #fd: number | undefined;
  #syncs = 0;
  #syncing: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  constructor(databasePath: string) {
    this.#walPath = databasePath === ':memory:' || databasePath === '' ? undefined : `${databasePath}-wal`;
  }

  get syncs(): number {
    return this.#syncs;
  }

  durable(databaseOpen: boolean): Promise<void> {
    if (this.#syncing) {
      // The running sync may have started before the caller's commit: wait for the next one.
      this.#queued ??= this.#syncing.then(() => {
        this.#queued = undefined;
        return this.durable(databaseOpen);
      });
      return this.#queued;
    }
    this.#syncing = this.#sync(databaseOpen).finally(() => (this.#syncing = undefined));
    return this.#syncing;
  }

  close(): void {
    const fd = this.#fd;
    this.#fd = undefined;
    // A sync in flight keeps its descriptor until it settles (closing it now could hand the number to another file).
    if (fd !== undefined) {
      if (this.#syncing) void this.#syncing.catch(() => undefined).finally(() => closeSync(fd));
      else closeSync(fd);
    }
  }

  #sync(databaseOpen: boolean): Promise<void> {
    if (this.#fd === undefined) {
      if (this.#walPath === undefined || !databaseOpen) return Promise.resolve();
      try {
        // Read-only is enough for fdatasync; SQLite locks the -shm file, never this one.
        this.#fd = openSync(this.#walPath, 'r');
      } catch (error) {
        // No WAL yet means nothing was committed through it.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Promise.resolve();
        return Promise.reject(error as Error);
      }
    }
    const fd = this.#fd;
    this.#syncs++;
    return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
  }
}
