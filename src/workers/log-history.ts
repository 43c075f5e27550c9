import type { JobGate } from '../shared/background-service.ts';
import type { Logger } from '../shared/logger.ts';
import type { SqlLogHistoryStore } from './log-history-store.ts';
import type { FunctionLogLine } from '../workerd/index.ts';
import type { Clock } from '../shared/clock.ts';

/** Lines wait at most this long (or until BATCH lines) before one INSERT takes them. */
const FLUSH_MS = 200;
const BATCH = 500;
/** Lines older than this are pruned, hourly, by one node at a time. */
const KEEP_MS = 7 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;
/**
 * A script keeps at most its newest KEEP_LINES lines (the most a history read asks for), trimmed after every
 * TRIM_EVERY lines this node wrote for it: a tenant's flood is bounded by count here as by bytes in the
 * files of a lone node (src/workerd/log-limits.ts); each line is bounded by the per-invocation cap.
 */
export const KEEP_LINES = 100_000;
const TRIM_EVERY = 5_000;
/** A history is read in pages of this many lines: no query result and no encoding holds the event loop long. */
const PAGE_LINES = 500;

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
  /** Lines written per script since its last trim. */
  readonly #sinceTrim = new Map<string, number>();

  readonly #clock: Clock;

  constructor(deps: { store: SqlLogHistoryStore; logger: Logger; gate: JobGate }, clock: Clock) {
    this.#clock = clock;
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
    const key = `${accountId}/${script}`;
    const written = (this.#sinceTrim.get(key) ?? 0) + 1;
    this.#sinceTrim.set(key, written >= TRIM_EVERY ? 0 : written);
    if (written >= TRIM_EVERY) void this.#trim(accountId, script);
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

  /** The last `count` lines of a script from every node (this node's pending ones written first), in pages. */
  async *tail(accountId: string, script: string, count: number): AsyncGenerator<string> {
    await this.flush();
    let fromId = await this.#store.firstIdOfLast(accountId, script, count);
    for (let left = count; left > 0;) {
      const page = await this.#store.page(accountId, script, fromId, Math.min(PAGE_LINES, left));
      if (page.count === 0) return;
      yield page.text;
      left -= page.count;
      fromId = page.nextId;
    }
  }

  async #trim(accountId: string, script: string): Promise<void> {
    // After the lines that made the count are written.
    await this.flush();
    try {
      await this.#store.trim(accountId, script, KEEP_LINES);
    } catch (error) {
      this.#logger.warn('function log lines could not be trimmed', { err: error });
    }
  }

  async #prune(): Promise<void> {
    try {
      if (!(await this.#gate('worker-log-lines', PRUNE_EVERY_MS * 1.5))) return;
      await this.#store.pruneBefore(new Date(this.#clock.now() - KEEP_MS).toISOString());
    } catch (error) {
      this.#logger.warn('function log lines could not be pruned', { err: error });
    }
  }
}
