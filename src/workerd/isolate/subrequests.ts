import { invocation } from './invocation.js';
import { SUBREQUEST_LIMIT } from './params.js';

/**
 * Limits the `fetch()` calls of one invocation, as Cloudflare does: past the limit `fetch()` rejects with
 * "Too many subrequests." (its message). workerd counts nothing itself, so the global `fetch` is replaced once
 * by one that counts in the invocation it is called from (invocation.ts: the frame the handler wrappers of
 * trace.ts enter for each request, Cron Trigger run or event), so invocations running at once in one isolate
 * each have their own count. The limit is Cloudflare's 10,000 unless LEDGE_SUBREQUESTS_PER_INVOCATION says
 * otherwise (limits.ts).
 */
const nativeFetch = globalThis.fetch;
globalThis.fetch = function fetch(this: unknown, ...args: Parameters<typeof nativeFetch>) {
  const current = invocation.getStore();
  if (current !== undefined && ++current.subrequests > SUBREQUEST_LIMIT) {
    return Promise.reject(new Error('Too many subrequests.'));
  }
  return nativeFetch.apply(this, args);
};
