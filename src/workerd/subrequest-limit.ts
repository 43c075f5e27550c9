/** The module that counts each invocation's subrequests (imported by the wrapper, see console-shim.ts). */
export const SUBREQUEST_MODULE = '__ledge_limits.js';

/**
 * Subrequests one invocation may make: Cloudflare's limit on paid plans ("Subrequests: 10,000/request",
 * developers.cloudflare.com/workers/platform/limits). LEDGE_SUBREQUESTS_PER_INVOCATION changes it.
 */
export const DEFAULT_SUBREQUESTS_PER_INVOCATION = 10_000;

/**
 * Source of a module that limits the `fetch()` calls of one invocation, as Cloudflare does: past the limit
 * `fetch()` rejects with "Too many subrequests." (its message). workerd counts nothing itself, so the
 * wrapper runs each invocation (a request, or a Cron Trigger's scheduled() run, which arrives as a fetch from
 * the ping service) in an AsyncLocalStorage frame holding its count, and the global `fetch` is replaced once
 * by one that counts in the frame it is called from, so invocations running at once in one isolate each
 * have their own count.
 */
export function subrequestLimitSource(limit: number): string {
  return `import { AsyncLocalStorage } from 'node:async_hooks';
const LIMIT = ${JSON.stringify(limit)};
const invocations = new AsyncLocalStorage();
const nativeFetch = globalThis.fetch;
globalThis.fetch = function fetch(...args) {
  const invocation = invocations.getStore();
  if (invocation !== undefined && ++invocation.subrequests > LIMIT) {
    return Promise.reject(new Error('Too many subrequests.'));
  }
  return nativeFetch.apply(this, args);
};
export function limitSubrequests(main) {
  if (typeof main === 'function' && typeof main.prototype?.fetch === 'function') {
    return class extends main {
      fetch(...args) {
        return invocations.run({ subrequests: 0 }, () => super.fetch(...args));
      }
    };
  }
  if (main !== null && typeof main === 'object' && typeof main.fetch === 'function') {
    const fetch = main.fetch;
    return Object.assign(Object.create(Object.getPrototypeOf(main)), main, {
      fetch(...args) {
        return invocations.run({ subrequests: 0 }, () => fetch.apply(this, args));
      },
    });
  }
  return main;
}
`;
}
