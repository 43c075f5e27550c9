import { WorkerdProcess, type WorkerdOptions } from './workerd-process.ts';

/**
 * One generation of the functions runtime: workerd processes started from the same config, each on its
 * own inherited listening socket of the functions port (the kernel spreads connections over them, see
 * steerConnections). workerd runs
 * JavaScript on one thread, so a single process tops out at one core (bench/functions: ~1 core spent in
 * workerd at ~2k GET/s while the machine's second core idled); each process is its own isolate, as on
 * Cloudflare, where consecutive requests may also land in different isolates.
 */
export class WorkerdGroup {
  /** The processes on the functions port. */
  readonly processes: readonly WorkerdProcess[];
  /** Settles once every process listens, or rejects with the first failure (the others are stopped). */
  readonly ready: Promise<void>;
  /** Resolves when any process exits, with that process and its exit code. */
  readonly exited: Promise<{ process: WorkerdProcess; code: number | null }>;

  /**
   * `pingSockets[i]`: the watchdog's socket of process i, when they run functions themselves. `oneProcess`: a
   * single process listens on every socket (a script whose Durable Objects must each have one live instance).
   */
  constructor(
    sockets: readonly { fd: number }[],
    options: Omit<WorkerdOptions, 'sockets' | 'pingSocket'> & {
      pingSockets?: readonly string[] | undefined;
      oneProcess?: boolean | undefined;
    },
  ) {
    const { pingSockets, oneProcess, ...common } = options;
    const perProcess = oneProcess ? [sockets] : sockets.map((socket) => [socket]);
    this.processes = perProcess.map(
      (own, index) => new WorkerdProcess({ ...common, sockets: own, pingSocket: pingSockets?.[index] }),
    );
    this.ready = Promise.all(this.processes.map((p) => p.ready)).then(
      () => undefined,
      async (error: unknown) => {
        await this.stop(1_000);
        throw error;
      },
    );
    this.ready.catch(() => undefined);
    this.exited = Promise.race(this.processes.map((process) => process.exited.then((code) => ({ process, code }))));
  }

  get pids(): number[] {
    return this.processes.map((p) => p.child.pid).filter((pid): pid is number => pid !== undefined);
  }

  /** Every process still runs. */
  get healthy(): boolean {
    return this.processes.every((p) => p.running);
  }

  /** True once stop() was called on the group (an exit after that is expected). */
  get stopping(): boolean {
    return this.processes.some((p) => p.stopping);
  }

  /** SIGTERM to all (they finish in-flight requests), SIGKILL after `graceMs`. */
  async stop(graceMs?: number): Promise<void> {
    await Promise.all(this.processes.map((p) => p.stop(graceMs)));
  }
}
