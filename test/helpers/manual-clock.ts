import type { Clock, ClockTimer } from '../../src/shared/clock.ts';

interface Armed {
  due: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock a test moves by hand (src/shared/clock.ts): timers armed on it fire only inside advance(), in
 * due order, so a test of intervals, retries or deadlines takes the time of the work, not of the waits.
 * Its epoch time starts at the real time, so timestamps stay plausible next to the database's.
 */
export class ManualClock implements Clock {
  readonly #epoch: number;
  #monotonic = 0;
  #seq = 0;
  #armed: Armed[] = [];

  /** Starts at `startMs` (epoch ms; default: the real time now). */
  constructor(startMs = Date.now()) {
    this.#epoch = startMs;
  }

  now(): number {
    return this.#epoch + this.#monotonic;
  }

  monotonic(): number {
    return this.#monotonic;
  }

  schedule(ms: number, fn: () => void): ClockTimer {
    const armed = { due: this.#monotonic + Math.max(0, ms), seq: this.#seq++, fn };
    this.#armed.push(armed);
    return { cancel: () => (this.#armed = this.#armed.filter((a) => a !== armed)) };
  }

  /** Timers still armed (a test can check that a stopped service left none). */
  get pending(): number {
    return this.#armed.length;
  }

  /**
   * Moves time forward by `ms`, firing each timer that comes due at its own time. Between two timers the
   * event loop turns, so work a timer starts (a database write, a probe's connect) can arm the next one.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#monotonic + ms;
    for (;;) {
      await turn();
      const next = this.#armed.filter((a) => a.due <= target).sort((a, b) => a.due - b.due || a.seq - b.seq)[0];
      if (!next) break;
      this.#armed = this.#armed.filter((a) => a !== next);
      this.#monotonic = Math.max(this.#monotonic, next.due);
      next.fn();
    }
    this.#monotonic = target;
  }
}

/** One turn of the event loop: I/O callbacks that are ready run, then this resolves. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
