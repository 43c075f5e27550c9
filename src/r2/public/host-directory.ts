import { CoalescedReload } from '../../shared/coalesced-reload.ts';
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
  readonly #reload: CoalescedReload;
  #hosts = new Map<string, PublicHost>();

  constructor(options: {
    store: PublicDomainStore;
    managedHostname: (bucketId: string) => string;
    refreshMs?: number | undefined;
    logger?: Logger | undefined;
  }) {
    const { store, managedHostname } = options;
    this.#reload = new CoalescedReload({
      load: async () => {
        const hosts = new Map<string, PublicHost>();
        for (const row of await store.publicHosts()) {
          const entry = { bucketId: row.bucketId, accountId: row.accountId, bucketName: row.bucketName };
          hosts.set(row.domain ?? managedHostname(row.bucketId), entry);
        }
        this.#hosts = hosts;
      },
      failure: 'public bucket hosts reload failed',
      refreshMs: options.refreshMs,
      logger: options.logger,
    });
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
    return this.#reload.refresh();
  }

  /** A reload whose failure is logged (for change listeners, which cannot wait). */
  refreshSoon(): void {
    this.#reload.refreshSoon();
  }

  start(): Promise<void> {
    return this.#reload.start();
  }

  stop(): Promise<void> {
    return this.#reload.stop();
  }
}
