import { alwaysRun, type BackgroundService, type JobGate } from './background-service.ts';
import type { Clock, ClockTimer } from './clock.ts';
import type { Logger } from './logger.ts';

export interface PeriodicJobOptions {
  /** Names the job in logs and, with `gate`, its lease among the nodes. */
  name: string;
  /** Time between two passes, counted from the due times (a slow pass does not shift the next ones). */
  everyMs: number;
  /** The first pass, counted from start(): 0 runs it at once (default: one period). */
  firstAfterMs?: number | undefined;
  /** One pass; errors are logged and the job goes on. */
  run: () => Promise<unknown>;
  clock: Clock;
  logger?: Logger | undefined;
  /** With several nodes, one at a time runs the job: each pass first asks for a lease of 1.5 periods. */
  gate?: JobGate | undefined;
  /** The lease's name (default: `name`). */
  lease?: string | undefined;
}

/**
 * The one loop behind every periodic background job (retention, lifecycle, cluster heartbeats): passes at
 * fixed times on the job's clock, never two at once (a pass still running when the next is due skips it),
 * and stop() waits for the pass under way, so nothing writes after its owner stopped.
 */
export class PeriodicJob implements BackgroundService {
  readonly name: string;
  readonly #options: PeriodicJobOptions;
  readonly #clock: Clock;
  readonly #gate: JobGate;
  #timer: ClockTimer | undefined;
  #due = 0;
  #running: Promise<void> | undefined;
  #stopped = true;

  constructor(options: PeriodicJobOptions) {
    this.name = options.name;
    this.#options = options;
    this.#clock = options.clock;
    this.#gate = options.gate ?? alwaysRun;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#due = this.#clock.monotonic() + (this.#options.firstAfterMs ?? this.#options.everyMs);
    this.#arm();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#running;
  }

  /** Runs a pass now unless one is under way (then waits for that one). */
  runNow(): Promise<void> {
    this.#running ??= this.#pass().finally(() => (this.#running = undefined));
    return this.#running;
  }

  #arm(): void {
    if (this.#stopped) return;
    this.#timer = this.#clock.schedule(this.#due - this.#clock.monotonic(), () => this.#fire());
  }

  #fire(): void {
    if (this.#stopped) return;
    void this.runNow();
    const now = this.#clock.monotonic();
    this.#due += this.#options.everyMs;
    // After a stall (a suspended machine) missed passes are skipped, never run in a burst.
    if (this.#due <= now) this.#due = now + this.#options.everyMs;
    this.#arm();
  }

  async #pass(): Promise<void> {
    try {
      if (await this.#gate(this.#options.lease ?? this.name, this.#options.everyMs * 1.5)) await this.#options.run();
    } catch (error) {
      this.#options.logger?.error(`${this.name} failed`, { err: error });
    }
  }
}
