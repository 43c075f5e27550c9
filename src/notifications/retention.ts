import { alwaysRun, type JobGate } from '../shared/background-service.ts';
import type { Logger } from '../shared/logger.ts';
import type { DeliveryHistory } from './history.ts';

const BATCH = 2_000;
const EVERY_MS = 60 * 60 * 1000;
/** The first prune waits this long, so a server's start-up (and its first answers) never shares the CPU with it. */
const FIRST_AFTER_MS = 30_000;

/**
 * Keeps notification history to its retention (a BackgroundService): 30 s after start and then hourly, deletes
 * the attempts older than it, with the stored bodies nothing else refers to. Small transactions with a
 * turn of the event loop between them, so deliveries and API calls are never held up by a long prune.
 */
export class HistoryRetention {
  readonly name = 'notifications-history-retention';
  readonly #history: DeliveryHistory;
  readonly #logger: Logger;
  /** With several nodes, one at a time prunes. */
  readonly #gate: JobGate;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;

  constructor(options: { history: DeliveryHistory; logger: Logger; gate?: JobGate | undefined }) {
    this.#history = options.history;
    this.#logger = options.logger;
    this.#gate = options.gate ?? alwaysRun;
  }

  start(): void {
    this.#stopped = false;
    this.#schedule(FIRST_AFTER_MS);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** Prunes everything sent before `now - retention`; returns what went. */
  async prune(nowMs = Date.now()): Promise<{ attempts: number; bodies: number }> {
    const cutoff = new Date(nowMs - this.#history.retentionMs).toISOString();
    const total = { attempts: 0, bodies: 0 };
    for (;;) {
      const batch = await this.#history.pruneBatch(cutoff, BATCH);
      total.attempts += batch.attempts;
      total.bodies += batch.bodies;
      if (batch.attempts === 0 || this.#stopped) return total;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => {
      this.#running = this.#gate('notifications-retention', EVERY_MS * 1.5)
        .then((mine) => (mine ? this.prune() : undefined))
        .then((pruned) => {
          if (pruned && pruned.attempts > 0) this.#logger.info('notification history pruned', { ...pruned });
        })
        .catch((error: unknown) => this.#logger.error('notification history prune failed', { err: error }))
        .finally(() => {
          if (!this.#stopped) this.#schedule(EVERY_MS);
        });
    }, delayMs);
    this.#timer.unref();
  }
}
