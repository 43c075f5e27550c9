import type { SqlDatabase } from '../db/index.ts';
import type { BackgroundService } from '../shared/background-service.ts';
import type { Clock } from '../shared/clock.ts';
import { PeriodicJob } from '../shared/periodic-job.ts';
import type { Logger } from '../shared/logger.ts';
import { ChangeFeed } from './change-feed.ts';
import { SqlLeaseStore, type LeaseStore } from './lease-store.ts';
import { ClusterMembership } from './membership.ts';
import { SqlNodeStore } from './node-store.ts';
import { shardOwner } from './shard.ts';

export interface ClusterOptions {
  db: SqlDatabase;
  nodeId: string;
  logger: Logger;
  /** How often a node beats (LEDGE_CLUSTER_HEARTBEAT_MS; default 5 s). A node is dead after two missed beats. */
  heartbeatMs?: number | undefined;
  /** Heartbeats, leases and the live-set refresh run on it (tests pass a clock they advance). */
  clock: Clock;
}

/**
 * This node's view of the others sharing its database: the change feed that invalidates per-node caches,
 * the live set that sharded work (health checks) is spread over, and leases for work one node at a time
 * may do (retention, lifecycle, orphan collection).
 *
 * On SQLite there is one node: the feed calls listeners in-process, the live set is this node alone, and
 * leases are always this node's. Nothing here costs a query or a connection then.
 */
export class Cluster {
  readonly nodeId: string;
  readonly feed: ChangeFeed;
  /** True when the database may be shared by several nodes (PostgreSQL). */
  readonly shared: boolean;
  readonly #leases: LeaseStore;
  readonly #membership: ClusterMembership | undefined;
  readonly #logger: Logger;
  #live: readonly string[];
  readonly #liveListeners: Array<() => void> = [];
  /** Job leases this node has taken: given up when it stops, so another node takes the jobs at once. */
  readonly #held = new Set<string>();
  readonly #clock: Clock;
  /** Reads the live set as often as nodes beat, so a dead node's share moves within two beats and a bit. */
  readonly #liveRefresh: PeriodicJob | undefined;

  constructor(options: ClusterOptions) {
    this.nodeId = options.nodeId;
    this.shared = options.db.dialect === 'postgres';
    this.#logger = options.logger;
    this.#clock = options.clock;
    this.feed = new ChangeFeed(options.db, options.nodeId, options.logger);
    this.#leases = new SqlLeaseStore(options.db);
    this.#live = [options.nodeId];
    this.#membership = this.shared
      ? new ClusterMembership({
          nodeId: options.nodeId,
          nodes: new SqlNodeStore(options.db),
          logger: options.logger,
          heartbeatMs: options.heartbeatMs,
          clock: this.#clock,
        })
      : undefined;
    this.#liveRefresh = this.#membership
      ? new PeriodicJob({
          name: 'cluster-live-nodes',
          everyMs: this.#membership.heartbeatMs,
          clock: this.#clock,
          run: () => this.#refreshLive(),
        })
      : undefined;
  }

  /**
   * Started first and stopped last: the feed listens before any cache is filled, and this node is among the
   * live ones before its checker decides which origins are its own.
   */
  get background(): BackgroundService {
    return {
      name: 'cluster',
      start: () => this.#start(),
      stop: () => this.#stop(),
    };
  }

  /** Calls `listener` with the key of every `topic` change another node makes (never this node's own). */
  onRemote(topic: string, listener: (key: string) => void): () => void {
    return this.feed.subscribe((change) => {
      if (change.topic !== topic || change.origin === this.nodeId) return;
      try {
        listener(change.key);
      } catch (error) {
        this.#logger.warn('a change listener failed', { topic, err: error });
      }
    });
  }

  /** Tells the other nodes that `topic`/`key` changed (after the write committed); never throws. */
  announce(topic: string, key: string): void {
    if (!this.shared) return;
    this.feed.publish(topic, key).catch((error: unknown) => {
      this.#logger.warn('could not announce a change to the other nodes', { topic, err: error });
    });
  }

  /**
   * Whether this node owns `key` among the live nodes (rendezvous hashing): every node computes the same
   * owner from the same live set, and a dead node's keys move to the survivors once it misses two beats.
   */
  owns(key: string): boolean {
    if (!this.shared) return true;
    return shardOwner(key, this.#live) === this.nodeId;
  }

  /** Called when the live set changed (a node joined, left or died): owners of sharded work moved. */
  onLiveChange(listener: () => void): void {
    this.#liveListeners.push(listener);
  }

  /** The live nodes as last read (sorted); this node alone on SQLite. */
  get liveNodes(): readonly string[] {
    return this.#live;
  }

  /**
   * Takes or renews the lease `job` for `ttlMs`: true while this node may run it. A periodic job asks on every
   * run with a ttl longer than its period, so its holder keeps it and another node takes over only once the
   * holder stopped renewing (dead or stopped).
   */
  async mayRun(job: string, ttlMs: number): Promise<boolean> {
    if (!this.shared) return true;
    try {
      const mine = await this.#leases.acquire(job, this.nodeId, ttlMs, this.#clock.now());
      if (mine) this.#held.add(job);
      else this.#held.delete(job);
      return mine;
    } catch (error) {
      this.#logger.warn('could not take a job lease', { job, err: error });
      return false;
    }
  }

  async #start(): Promise<void> {
    await this.feed.start();
    if (!this.#membership) return;
    await this.#membership.start();
    await this.#refreshLive();
    this.#liveRefresh?.start();
  }

  async #stop(): Promise<void> {
    await this.#liveRefresh?.stop();
    for (const job of this.#held) await this.#leases.release(job, this.nodeId).catch(() => undefined);
    this.#held.clear();
    await this.#membership?.stop();
    await this.feed.stop();
  }

  async #refreshLive(): Promise<void> {
    if (!this.#membership) return;
    try {
      const live = await this.#membership.liveNodes();
      // This node counts itself live while it runs, whatever a slow heartbeat says.
      const next = live.includes(this.nodeId) ? live : [...live, this.nodeId].sort();
      const changed = next.join('\n') !== this.#live.join('\n');
      this.#live = next;
      if (changed) for (const listener of this.#liveListeners) listener();
    } catch (error) {
      this.#logger.warn('could not read the live nodes', { err: error });
    }
  }
}
