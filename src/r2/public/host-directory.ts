import type { Logger } from '../../shared/logger.ts';
import type { PublicDomainStore } from './domain-store.ts';

/** The bucket a public hostname serves. */
export interface PublicHost {
  bucketId: string;
  accountId: string;
  bucketName: string;
}

/**
 * Every hostname the traffic port serves a bucket on, in memory: the traffic listener asks `claims` for
 * each request before load-balancer routing, so the answer must not wait for the database. Reloaded
 * after each change this node makes, when another node announces one, when a bucket changes, and every
 * `refreshMs` as a backstop. A BackgroundService (started before the traffic listener).
 */
export class PublicHostDirectory {
  readonly name = 'r2-public-hosts';
  readonly #store: PublicDomainStore;
  readonly #managedHostname: (bucketId: string) => string;
  readonly #refreshMs: number;
  readonly #logger: Logger | undefined;
  #hosts = new Map<string, PublicHost>();
  #running: Promise<void> | undefined;
  #again = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: {
    store: PublicDomainStore;
    managedHostname: (bucketId: string) => string;
    refreshMs?: number | undefined;
    logger?: Logger | undefined;
  }) {
    this.#store = options.store;
    this.#managedHostname = options.managedHostname;
    this.#refreshMs = options.refreshMs ?? 30_000;
    this.#logger = options.logger;
  }

  /** `hostname`: lowercase, without port or trailing dot. */
  claims(hostname: string): boolean {
    return this.#hosts.has(hostname);
  }

  lookup(hostname: string): PublicHost | undefined {
    return this.#hosts.get(hostname);
  }

  /** Reloads the hostnames; calls made while a reload runs share one more reload after it. */
  refresh(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    const run = (async () => {
      do {
        this.#again = false;
        const hosts = new Map<string, PublicHost>();
        for (const row of await this.#store.publicHosts()) {
          const entry = { bucketId: row.bucketId, accountId: row.accountId, bucketName: row.bucketName };
          hosts.set(row.domain ?? this.#managedHostname(row.bucketId), entry);
        }
        this.#hosts = hosts;
      } while (this.#again);
    })();
    this.#running = run;
    const clear = () => {
      this.#running = undefined;
    };
    run.then(clear, clear);
    return run;
  }

  /** A reload whose failure is logged (for change listeners, which cannot wait). */
  refreshSoon(): void {
    this.refresh().catch((error: unknown) => this.#logger?.error('public bucket hosts reload failed', { err: error }));
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
