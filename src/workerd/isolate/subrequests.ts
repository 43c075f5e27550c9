import { AsyncLocalStorage } from 'node:async_hooks';
import { SUBREQUEST_LIMIT } from './params.js';

/**
 * Limits the `fetch()` calls of one invocation, as Cloudflare does: past the limit `fetch()` rejects with
 * "Too many subrequests." (its message). workerd counts nothing itself, so the wrapper runs each invocation
 * (a request, or a Cron Trigger's scheduled() run, which arrives as a fetch from the ping service) in an
 * AsyncLocalStorage frame holding its count, and the global `fetch` is replaced once by one that counts in
 * the frame it is called from, so invocations running at once in one isolate each have their own count.
 * The limit is Cloudflare's 10,000 unless LEDGE_SUBREQUESTS_PER_INVOCATION says otherwise (limits.ts).
 */
const invocations = new AsyncLocalStorage<{ subrequests: number }>();
const nativeFetch = globalThis.fetch;
globalThis.fetch = function fetch(this: unknown, ...args: Parameters<typeof nativeFetch>) {
  const invocation = invocations.getStore();
  if (invocation !== undefined && ++invocation.subrequests > SUBREQUEST_LIMIT) {
    return Promise.reject(new Error('Too many subrequests.'));
  }
  return nativeFetch.apply(this, args);
};

type EntrypointClass = new (...args: unknown[]) => { fetch(...args: unknown[]): unknown };

/** Runs each invocation of the default export's fetch in a frame of its own count. */
export function limitSubrequests(main: unknown): unknown {
  if (typeof main === 'function' && typeof main.prototype?.fetch === 'function') {
    const Base = main as EntrypointClass;
    return class extends Base {
      override fetch(...args: unknown[]) {
        return invocations.run({ subrequests: 0 }, () => super.fetch(...args));
      }
    };
  }
  const handlers = main as { fetch?: (...args: unknown[]) => unknown } | null;
  if (handlers !== null && typeof handlers === 'object' && typeof handlers.fetch === 'function') {
    const fetch = handlers.fetch;
    return Object.assign(Object.create(Object.getPrototypeOf(handlers)), handlers, {
      fetch(this: unknown, ...args: unknown[]) {
        return invocations.run({ subrequests: 0 }, () => fetch.apply(this, args));
      },
    });
  }
  return main;
}
