import type { BackgroundService } from '../shared/background-service.ts';
import type { Clock } from '../shared/clock.ts';
import { PeriodicJob } from '../shared/periodic-job.ts';
import type { Logger } from '../shared/logger.ts';
import type { NodeStore } from './node-store.ts';

export interface MembershipOptions {
  nodeId: string;
  nodes: NodeStore;
  logger: Logger;
  /** How often this node says it is alive (default 5 s). A node is dead after two missed beats. */
  heartbeatMs?: number;
  /** Heartbeat times and their timer (tests pass a clock they advance). */
  clock: Clock;
}

/**
 * This node's place among the nodes sharing the database: it beats every `heartbeatMs`, leaves on stop,
 * and answers which nodes are live (for work sharded over them, such as health checks).
 */
export class ClusterMembership implements BackgroundService {
  readonly name = 'cluster-membership';
  readonly nodeId: string;
  readonly heartbeatMs: number;
  readonly #nodes: NodeStore;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #beats: PeriodicJob;

  constructor(options: MembershipOptions) {
    this.nodeId = options.nodeId;
    this.#nodes = options.nodes;
    this.#logger = options.logger;
    this.heartbeatMs = options.heartbeatMs ?? 5_000;
    this.#clock = options.clock;
    this.#beats = new PeriodicJob({
      name: 'cluster-heartbeat',
      everyMs: this.heartbeatMs,
      clock: this.#clock,
      run: () => this.#beat(),
    });
  }

  /** Nodes count as dead after missing two beats (and a margin for a busy event loop). */
  get staleAfterMs(): number {
    return this.heartbeatMs * 2 + 1_000;
  }

  async start(): Promise<void> {
    await this.#nodes.heartbeat(this.nodeId, this.#clock.now());
    this.#beats.start();
  }

  async stop(): Promise<void> {
    await this.#beats.stop();
    // Others take this node's share at once instead of after the staleness bound.
    await this.#nodes.leave(this.nodeId).catch(() => undefined);
  }

  liveNodes(): Promise<string[]> {
    return this.#nodes.liveNodes(this.#clock.now(), this.staleAfterMs);
  }

  async #beat(): Promise<void> {
    try {
      const now = this.#clock.now();
      await this.#nodes.heartbeat(this.nodeId, now);
      // Rows of nodes gone for a day are history; any live node may clear them.
      await this.#nodes.prune(now, 86_400_000);
    } catch (error) {
      this.#logger.warn('cluster heartbeat failed', { error: (error as Error).message });
    }
  }
}
