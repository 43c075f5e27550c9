import type { Logger } from '../shared/logger.ts';
import { openListeningSockets, steerConnections, type ListeningSocket } from './listen-socket.ts';
import type { WorkerdGroup } from './workerd-group.ts';

/** Time the old generation gets to read the requests of connections it accepted before the steering. */
const SETTLE_MS = 100;

/**
 * The functions port's sockets across workerd generations: which sockets the running generation listens on,
 * fresh ones for the next generation (so the retiring one never accepts a connection it would then close
 * unread), and the retirement of a generation with its sockets. Connections are moved between sockets by
 * steering the port's reuseport group (listen-socket.ts).
 */
export class PortGenerations {
  readonly #host: string;
  readonly #processes: number;
  /** The running generation's sockets: one per workerd process, indices 0..n-1 of the port's group. */
  #sockets: ListeningSocket[] | undefined;
  /** Whether each generation gets its own steered sockets (see steerConnections); else they share them. */
  #steering: Promise<boolean> = Promise.resolve(false);
  readonly #retiring = new Set<WorkerdGroup>();

  constructor(host: string, processes: number) {
    this.#host = host;
    this.#processes = processes;
  }

  /** The running generation's sockets (undefined before `open` and after `close`). */
  get sockets(): ListeningSocket[] | undefined {
    return this.#sockets;
  }

  get port(): number | undefined {
    return this.#sockets?.[0]?.port;
  }

  /** Generations being retired (stopping). */
  get retiring(): ReadonlySet<WorkerdGroup> {
    return this.#retiring;
  }

  async open(port: number): Promise<void> {
    this.#sockets = await openListeningSockets(this.#host, port, this.#processes);
  }

  /**
   * Spreads connections evenly over the processes (the kernel's own hash can be lopsided with few sockets),
   * and learns whether swaps can be steered.
   */
  learnSteering(logger: Logger): void {
    const sockets = this.#sockets;
    if (!sockets) return;
    this.#steering = steerConnections(sockets[0]!, { base: 0, count: sockets.length }).then((steering) => {
      if (!steering) {
        logger.warn(
          'python3 not found: workerd generations share their sockets, so a redeploy may reset connections opened during the swap',
        );
      }
      return steering;
    });
  }

  close(): void {
    for (const socket of this.#sockets ?? []) socket.handle.close();
    this.#sockets = undefined;
  }

  /**
   * The sockets the next generation listens on: fresh ones when steering works and nothing crashed, so the
   * retiring generation never accepts a connection it would then close unread. First new connections are pinned
   * to the running generation (indices 0..n-1), so the next sockets' holder never gets one; the new sockets join
   * the group after them (n..2n-1); then (the holder is gone) connections go to them, and wait in their backlogs
   * until the next generation is up, while the old one has all that time to read what it had accepted before.
   */
  async next(previous: WorkerdGroup | undefined): Promise<ListeningSocket[]> {
    const current = this.#sockets!;
    const steered =
      previous?.healthy === true &&
      (await this.#steering) &&
      (await steerConnections(current[0]!, { base: 0, count: current.length }));
    if (!steered) return current;
    const sockets = await openListeningSockets(this.#host, current[0]!.port, this.#processes);
    await steerConnections(current[0]!, { base: current.length, count: sockets.length });
    return sockets;
  }

  /**
   * Back to the running generation's sockets after the next one failed to start; connections already queued on
   * the new sockets are lost. They are the last of the group, so closing them from the end moves no other
   * socket's index.
   */
  async abandon(sockets: ListeningSocket[]): Promise<void> {
    const current = this.#sockets!;
    if (sockets === current) return;
    await steerConnections(current[0]!, { base: 0, count: current.length });
    for (const socket of [...sockets].reverse()) socket.handle.close();
  }

  /**
   * `sockets` (from `next`) become the running generation's, and `previous` retires: it finishes the requests
   * it has, then exits. Waiting for that means that once a deploy answers, no connection can still reach the old
   * code (keep-alive connections included). Then the previous sockets close, when they are not the ones in use.
   */
  async handOver(previous: WorkerdGroup | undefined, sockets: ListeningSocket[]): Promise<void> {
    const current = this.#sockets!;
    this.#sockets = sockets;
    if (!previous) return;
    this.#retiring.add(previous);
    const shared = sockets === current ? await this.#steerPastSurvivors(previous, current) : false;
    if (sockets !== current || shared) await new Promise((r) => setTimeout(r, SETTLE_MS));
    await previous.stop().finally(() => this.#retiring.delete(previous));
    if (sockets !== current) await this.#closeRetiredSockets(current, sockets.length);
    if (shared) await steerConnections(current[0]!, { base: 0, count: current.length });
  }

  /**
   * After a crash the new generation shares the old one's sockets, and a survivor that is SIGTERMed closes
   * the connections it accepted but has not read a request from yet (workerd drains that way). So, before
   * the SIGTERM, new connections go only to the socket of a process that died: no survivor accepts there,
   * so in the settle time the survivors read what they accepted and nothing new reaches them. Returns
   * whether it steered (the caller spreads connections over all sockets again after the retirement).
   */
  async #steerPastSurvivors(previous: WorkerdGroup, sockets: ListeningSocket[]): Promise<boolean> {
    const dead = previous.processes.findIndex((p) => !p.running);
    if (dead < 0 || !(await this.#steering)) return false;
    return steerConnections(sockets[0]!, { base: dead, count: 1 });
  }

  /**
   * Closes the retired sockets (indices 0..n-1; the live ones are n..n+m-1) without a new connection
   * ever reaching one. Closing a socket moves the last one of the group into its slot, so closing them
   * from index n-1 down shifts the live range down by one each time; before each close, connections go
   * to the live sockets whose index is the same before and after it. With one live socket there is no
   * such index: the kernel then falls back to its hash over what remains, which is only the live socket
   * once the retired one is gone (the close detaches it at once).
   */
  async #closeRetiredSockets(retired: ListeningSocket[], live: number): Promise<void> {
    for (let index = retired.length - 1; index >= 0; index--) {
      if (live > 1) await steerConnections(retired[index]!, { base: index + 1, count: live - 1 });
      retired[index]!.handle.close();
    }
    const [first] = this.#sockets ?? [];
    if (first) await steerConnections(first, { base: 0, count: live });
  }
}
