import { systemClock } from '../../shared/clock.ts';
/**
 * A coarse clock for the idle timeout (seconds matter, not milliseconds): the listener's sweep sets it each
 * time it runs, and reads and writes stamp connections with it. A socket timeout instead would re-arm a
 * timer on every read and write, twice per request on the client side.
 */
export const coarseClock = { now: systemClock.now() };
