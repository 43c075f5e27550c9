/**
 * A long-running part of the platform (health checker, dispatcher, runtime supervisor): the composition
 * root starts these after the API listens and stops them in reverse order on shutdown.
 */
export interface BackgroundService {
  name: string;
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
}

/**
 * Asks whether this node may run `job` now, for `ttlMs` (a lease among the nodes sharing a database; see
 * src/cluster). Periodic jobs that must run on one node at a time (retention, lifecycle, orphan collection)
 * ask before each run, with a ttl longer than their period. A single node may always run.
 */
export type JobGate = (job: string, ttlMs: number) => Promise<boolean>;

export const alwaysRun: JobGate = () => Promise.resolve(true);
