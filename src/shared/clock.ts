import { outsideRequest } from './request-context.ts';

/** A timer armed on a Clock; `cancel()` is safe to call twice or after it fired. */
export interface ClockTimer {
  cancel(): void;
}

/**
 * Time as the background jobs see it (health checks, notification retries, cron, retention, lifecycle,
 * cluster heartbeats). The server runs on `systemClock`; a test passes a clock it advances by hand
 * (test/helpers/manual-clock.ts), so timing behaviour is checked without waiting it out in real time.
 */
export interface Clock {
  /** Milliseconds since the epoch: timestamps, due times kept in the database. */
  now(): number;
  /** Milliseconds that only move forward (intervals in memory); unaffected by changes of the wall clock. */
  monotonic(): number;
  /**
   * Calls `fn` once `ms` of this clock's time has passed. The callback runs outside the request that armed
   * it (its logs carry no request id of another's), and the timer never keeps the process alive by itself.
   */
  schedule(ms: number, fn: () => void): ClockTimer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  schedule(ms, fn) {
    const timer = outsideRequest(() => setTimeout(fn, Math.max(0, ms)));
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};
