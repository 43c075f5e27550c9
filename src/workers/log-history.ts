import type { JobGate } from '../shared/background-service.ts';
import type { Logger } from '../shared/logger.ts';
import type { SqlLogHistoryStore } from './log-history-store.ts';
import type { FunctionLogLine } from './runtime/log-hub.ts';

/** Lines wait at most this long (or until BATCH lines) before one INSERT takes them. */
const FLUSH_MS = 200;
const BATCH = 500;
/** Lines older than this are pruned, hourly, by one node at a time. */
const KEEP_MS = 7 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;

/**
 * The history of functions' console output when several nodes share the database: every node writes the
 * lines its workerd prints, in batches, and `ledge tail --history` on any node reads them all.
 */
export class SharedLogHistory {
  readonly name = 'function-log-history';
  readonly #store: SqlLogHistoryStore;
  readonly #logger: Logger;
  readonly #gate: JobGate;
  #pending: Array<{ accountId: string; script: string; line: FunctionLogLine }> = [];
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  readonly #pruneTimer: NodeJS.Timeout;

  constructor(deps: { store: SqlLogHistoryStore; logger: Logger; gate: JobGate }) {
    this.#store = deps.store;
    this.#logger = deps.logger;
    this.#gate = deps.gate;
    this.#pruneTimer = setInterval(() => void this.#prune(), PRUNE_EVERY_MS);
    this.#pruneTimer.unref();
  }

  start(): void {}

  /** Writes the lines still pending (the runtime has stopped: nothing more comes). */
  async stop(): Promise<void> {
    clearInterval(this.#pruneTimer);
    await this.flush();
  }

  add(accountId: string, script: string, line: FunctionLogLine): void {
    this.#pending.push({ accountId, script, line });
    if (this.#pending.length >= BATCH) void this.flush();
    else if (!this.#timer) {
      this.#timer = setTimeout(() => void this.flush(), FLUSH_MS);
      this.#timer.unref();
    }
  }

  /** Writes what is pending (batches in order, one at a time). */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 0) return this.#writing;
    this.#writing = this.#writing.then(() =>
      this.#store.append(batch).catch((error: unknown) => {
        this.#logger.warn('function log lines could not be kept', { err: error, lines: batch.length });
      }),
    );
    return this.#writing;
  }

  /** The last `count` lines of a script from every node (this node's pending ones written first). */
  async recent(accountId: string, script: string, count: number): Promise<FunctionLogLine[]> {
    await this.flush();
    return this.#store.recent(accountId, script, count);
  }

  async #prune(): Promise<void> {
    try {
      if (!(await this.#gate('worker-log-lines', PRUNE_EVERY_MS * 1.5))) return;
      await this.#store.pruneBefore(new Date(Date.now() - KEEP_MS).toISOString());
    } catch (error) {
      this.#logger.warn('function log lines could not be pruned', { err: error });
    }
  }
}
