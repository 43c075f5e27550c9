import type { Clock } from '../shared/clock.ts';
/** Why the server is stopping: a signal, or the npm process that started it went away. */
export type StopReason = NodeJS.Signals | 'parent exited';

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const PARENT_POLL_MS = 250;
const PARENT_EXIT_GRACE_MS = 50;

/**
 * Resolves on the first request to stop: SIGINT (Ctrl+C), SIGTERM, SIGHUP (the terminal closed) or,
 * under npm (`npm start`), the death of npm itself. npm passes SIGINT and SIGTERM on to its script but
 * not SIGHUP, and nothing at all when it is killed, so a server it started would run on, orphaned,
 * holding its ports: it watches for being re-parented instead (Linux has no parent-death signal for a
 * process to set on itself from Node). Outside npm a server outlives its shell on purpose (nohup, &).
 * Install it before anything slow: a signal during start-up must still end in a clean shutdown.
 */
export function stopRequested(env: NodeJS.ProcessEnv = process.env): Promise<StopReason> {
  return new Promise((resolve) => {
    // `on`, not `once`: a signal without a listener would kill the process with its default action.
    for (const signal of STOP_SIGNALS) process.on(signal, () => resolve(signal));
    if (env['npm_lifecycle_event'] === undefined) return;
    const parent = process.ppid;
    const timer = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(timer);
      // A terminal's SIGHUP or Ctrl+C reaches npm and this process at once, and npm may be gone before this
      // process has run its signal handler: the signal, if one is on its way, is the reason to report.
      setTimeout(() => resolve('parent exited'), PARENT_EXIT_GRACE_MS).unref();
    }, PARENT_POLL_MS);
    timer.unref();
  });
}

/**
 * Bounds a shutdown: another signal (a second after the first), or `graceMs` without the clean stop
 * finishing, exits at once.
 * workerd processes die with the server either way (they run with PR_SET_PDEATHSIG, see
 * workerd-process.ts), so nothing is left holding a port.
 */
export function forceExitIfSlow(graceMs: number, clock: Clock, onForce: (why: string) => void): void {
  const force = (why: string) => {
    onForce(why);
    process.exit(1);
  };
  clock.schedule(graceMs, () => force(`shutdown took longer than ${graceMs} ms`));
  // Ctrl+C under `npm start` arrives twice at once (from the terminal, and forwarded by npm): only a
  // signal that comes after the first second is a user insisting.
  const since = clock.monotonic();
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (clock.monotonic() - since >= REPEAT_AFTER_MS) force(`${signal} during shutdown`);
    });
  }
}

const REPEAT_AFTER_MS = 1_000;
