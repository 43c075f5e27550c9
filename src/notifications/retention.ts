import type { JobGate } from '../shared/background-service.ts';
import type { Clock } from '../shared/clock.ts';
import { PeriodicJob } from '../shared/periodic-job.ts';
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
  readonly #clock: Clock;
  readonly #job: PeriodicJob;
  #stopped = false;

  constructor(options: { history: DeliveryHistory; logger: Logger; gate?: JobGate | undefined; clock: Clock }) {
    this.#history = options.history;
    this.#clock = options.clock;
    this.#job = new PeriodicJob({
      name: this.name,
      // The lease's name since it was first taken, so nodes of two versions never prune at once.
      lease: 'notifications-retention',
      everyMs: EVERY_MS,
      firstAfterMs: FIRST_AFTER_MS,
      clock: this.#clock,
      logger: options.logger,
      gate: options.gate,
      run: async () => {
        const pruned = await this.prune();
        if (pruned.attempts > 0) options.logger.info('notification history pruned', { ...pruned });
      },
    });
  }

  start(): void {
    this.#stopped = false;
    this.#job.start();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#job.stop();
  }

  /** Prunes everything sent before `now - retention`; returns what went. */
  async prune(nowMs = this.#clock.now()): Promise<{ attempts: number; bodies: number }> {
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
}
