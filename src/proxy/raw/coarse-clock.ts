import type { Clock } from '../../shared/clock.ts';

/**
 * A coarse clock for the idle timeout (seconds matter, not milliseconds): the listener's sweep moves it to
 * its clock's time each time it runs, and reads and writes stamp connections with it. A socket timeout
 * instead would re-arm a timer on every read and write, twice per request on the client side. Each
 * listener has its own, started at its clock's time when it starts listening: one kept from an earlier
 * sweep would make the first connections look idle since then.
 */
export class CoarseClock {
  now: number;
  readonly #clock: Clock;

  constructor(clock: Clock) {
    this.#clock = clock;
    this.now = clock.now();
  }

  /** Reads the clock (the sweep); returns the time read. */
  tick(): number {
    this.now = this.#clock.now();
    return this.now;
  }
}
