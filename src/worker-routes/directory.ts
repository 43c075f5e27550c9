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
  readonly #store: SqlWorkerRouteStore;
  readonly #refreshMs: number;
  readonly #logger: Logger | undefined;
  #table = WorkerRouteTable.EMPTY;
  #running: Promise<void> | undefined;
  #again = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: { store: SqlWorkerRouteStore; refreshMs?: number | undefined; logger?: Logger | undefined }) {
    this.#store = options.store;
    this.#refreshMs = options.refreshMs ?? 30_000;
    this.#logger = options.logger;
  }

  /** The current table (a new object after every change: callers keep no stale one). */
  get table(): WorkerRouteTable {
    return this.#table;
  }

  refresh(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    const run = (async () => {
      do {
        this.#again = false;
        const { routes, domains } = await this.#store.everything();
        this.#table = new WorkerRouteTable(
          routes.map((r) => ({ pattern: r.pattern, accountId: r.account_id, script: r.script })),
          domains.map((d) => ({ hostname: d.hostname, accountId: d.account_id, script: d.service })),
        );
      } while (this.#again);
    })();
    this.#running = run;
    const clear = () => {
      this.#running = undefined;
    };
    run.then(clear, clear);
    return run;
  }

  refreshSoon(): void {
    this.refresh().catch((error: unknown) => this.#logger?.error('worker routes reload failed', { err: error }));
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
