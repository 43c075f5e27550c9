import type { Clock } from './clock.ts';

/**
 * Whether the credential a request came with still opens what it opened (the token or key still valid, the
 * session still signed in, the membership still there, the address still allowed); `clientIp` overrides the
 * request's own address (a tail WebSocket connects from its own).
 */
export type GrantCheck = (clientIp?: string) => Promise<boolean>;

/** Ends a long-lived answer once its grant is gone; returns the function that stops watching. */
export type GrantWatcher = (onRevoked: () => void) => () => void;

/** How often an open stream re-checks its grant: what ends one whose access was taken on another node. */
export const GRANT_RECHECK_MS = 1_000;

/**
 * An in-process signal that some access was taken away (a token deleted or rolled, a member removed or demoted, a
 * dashboard session signed out): open streams re-check their grant at once instead of at their next tick.
 */
export class AccessChanges {
  readonly #listeners = new Set<() => void>();

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}

/**
 * Watches a grant: re-checked every GRANT_RECHECK_MS on `clock` and on each access change; `onRevoked` is called
 * once, the first time the check fails. Checks never overlap.
 */
export function watchGrant(
  check: GrantCheck,
  onRevoked: () => void,
  deps: { clock: Clock; changes?: AccessChanges | undefined },
): () => void {
  let stopped = false;
  let running = false;
  let again = false;
  let timer: { cancel(): void } | undefined;
  const run = async (): Promise<void> => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    timer?.cancel();
    try {
      const allowed = await check();
      if (!allowed && !stopped) {
        stop();
        onRevoked();
        return;
      }
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      return run();
    }
    if (!stopped) timer = deps.clock.schedule(GRANT_RECHECK_MS, () => void run());
  };
  const unsubscribe = deps.changes?.subscribe(() => void run());
  const stop = () => {
    stopped = true;
    timer?.cancel();
    unsubscribe?.();
  };
  timer = deps.clock.schedule(GRANT_RECHECK_MS, () => void run());
  return stop;
}
