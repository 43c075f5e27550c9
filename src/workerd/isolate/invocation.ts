import { AsyncLocalStorage } from 'node:async_hooks';
import { LOG_BYTES_PER_INVOCATION } from './contract.js';

/**
 * What is counted per invocation (a request, a Cron Trigger's run, a queue batch...): the console bytes it
 * may still write (console.ts) and the `fetch()` calls it has made (subrequests.ts). One AsyncLocalStorage
 * frame, entered by the handler wrappers of trace.ts, carries both, so concurrent invocations of one isolate
 * each have their own counts; a frame per count cost a Durable Object round trip ~10 µs more.
 */
export interface Invocation {
  /** Console bytes left before the rest is not recorded. */
  left: number;
  /** Console output went past the budget: the tail event says truncated. */
  over: boolean;
  subrequests: number;
}
export const invocation = new AsyncLocalStorage<Invocation>();
export const newInvocation = (): Invocation => ({ left: LOG_BYTES_PER_INVOCATION, over: false, subrequests: 0 });
