import type { Logger } from './logger.ts';

/**
 * The reload loop behind an in-memory directory that request paths read without a database query (the routes
 * table, public bucket hostnames): one reload at a time, calls made while one runs share a single reload after
 * it (so a change committed during a reload is never missed), a logged reload for change listeners that cannot
 * wait, and a reload every `refreshMs` as a backstop against a missed announcement.
 */
export class CoalescedReload {
  readonly #load: () => Promise<void>;
  readonly #refreshMs: number;
  readonly #failure: string;
  readonly #logger: Logger | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: {
    /** Reads the source and swaps the directory's contents in one assignment. */
    load: () => Promise<void>;
    /** What the log says when a background reload fails. */
    failure: string;
    refreshMs?: number | undefined;
    logger?: Logger | undefined;
  }) {
    this.#load = options.load;
    this.#failure = options.failure;
    this.#refreshMs = options.refreshMs ?? 30_000;
    this.#logger = options.logger;
  }

  /** Reloads; calls made while a reload runs share one more reload after it. */
  refresh(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    const run = (async () => {
      do {
        this.#again = false;
        await this.#load();
      } while (this.#again);
    })();
    this.#running = run;
    const clear = () => {
      this.#running = undefined;
    };
    run.then(clear, clear);
    return run;
  }

  /** A reload whose failure is logged. */
  refreshSoon(): void {
    this.refresh().catch((error: unknown) => this.#logger?.error(this.#failure, { err: error }));
  }

  async start(): Promise<void> {
    await this.refresh();
    this.#timer = setInterval(() => this.refreshSoon(), this.#refreshMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => undefined);
  }
}
