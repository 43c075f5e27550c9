import { CoalescedReload } from '../shared/coalesced-reload.ts';
import type { Logger } from '../shared/logger.ts';
import type { SqlWorkerRouteStore } from './store.ts';
import { WorkerRouteTable } from './table.ts';

/**
 * The route table the traffic port's listeners consult, in memory (no database read per request). Rebuilt
 * after each change this node commits (before the API answers), when another node announces one, and every
 * `refreshMs` as a backstop. A BackgroundService, started before the traffic listener.
 */
export class WorkerRouteDirectory {
  readonly name = 'worker-routes';
  readonly #reload: CoalescedReload;
  #table = WorkerRouteTable.EMPTY;

  constructor(options: { store: SqlWorkerRouteStore; refreshMs?: number | undefined; logger?: Logger | undefined }) {
    const { store } = options;
    this.#reload = new CoalescedReload({
      load: async () => {
        const { routes, domains } = await store.everything();
        this.#table = new WorkerRouteTable(
          routes.map((r) => ({ pattern: r.pattern, accountId: r.account_id, script: r.script })),
          domains.map((d) => ({ hostname: d.hostname, accountId: d.account_id, script: d.service })),
        );
      },
      failure: 'worker routes reload failed',
      refreshMs: options.refreshMs,
      logger: options.logger,
    });
  }

  /** The current table (a new object after every change: callers keep no stale one). */
  get table(): WorkerRouteTable {
    return this.#table;
  }

  refresh(): Promise<void> {
    return this.#reload.refresh();
  }

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
