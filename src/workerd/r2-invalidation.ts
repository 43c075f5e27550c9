import { request } from 'node:http';
import { R2_INVALIDATE_PATH } from './isolate/contract.ts';

/** What a process must be for an invalidation to reach it: its ping socket, and whether it still runs. */
export interface InvalidationTarget {
  readonly pingSocket: string | undefined;
  readonly running: boolean;
}

/** After a refused connection (a process still starting), the next try. */
const RETRY_MS = 10;

/**
 * Tells every workerd process that may run functions that objects (or a bucket's listings) changed, and resolves
 * once each has dropped its copies (isolate/r2-cache.ts) or has exited. The write that changed them is answered only then
 * (storage/object-changes.ts), so no isolate can serve the old object after it.
 *
 * Every live process is asked, not only the running generation's: a retiring process still answers its
 * requests in flight, and one still starting may already serve. No time limit: a process that never answers
 * is spinning, and the watchdog ends it at its CPU limit (its exit settles the wait); the write waits so long.
 */
export async function invalidateEverywhere(
  targets: Iterable<InvalidationTarget>,
  bucket: { accountId: string; name: string } | undefined,
  keys: string[] | undefined,
  lists = false,
): Promise<void> {
  // No bucket and no keys: every cached object and listing goes (isolate/r2-cache.ts invalidate); `lists`: the
  // bucket's listings go too.
  const body = JSON.stringify(
    bucket === undefined || keys === undefined
      ? { all: true }
      : { bucket: `${bucket.accountId}/${bucket.name}`, keys, ...(lists ? { lists: true } : {}) },
  );
  await Promise.all([...targets].map((target) => invalidateIn(target, body)));
}

async function invalidateIn(target: InvalidationTarget, body: string): Promise<void> {
  while (target.pingSocket !== undefined && target.running) {
    if (await post(target.pingSocket, body)) return;
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}

/** True once the ping service answered (it answers after every script of the process applied it). */
function post(socketPath: string, body: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      {
        socketPath,
        path: R2_INVALIDATE_PATH,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(true));
        response.on('error', () => resolve(false));
      },
    );
    req.on('error', () => resolve(false));
    req.end(body);
  });
}
