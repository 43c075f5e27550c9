import type { HealthEventBus } from '../health/events.ts';
import type { OriginState } from '../health/health-state.ts';
import type { Pool } from '../pool-schemas.ts';
import type { Clock } from '../../shared/clock.ts';

/** What the health store answers. */
export interface HealthReader {
  originStates(poolId: string): Map<string, OriginState> | Promise<Map<string, OriginState>>;
  poolState(poolId: string): { healthy: boolean } | undefined | Promise<{ healthy: boolean } | undefined>;
}

export interface PoolHealthSnapshot {
  poolHealthy: boolean;
  /** Origin name -> healthy; an origin never probed (or a pool without monitor) is absent: healthy. */
  unhealthyOrigins: ReadonlySet<string>;
  at: number;
}

/** A safety net: health events invalidate at once; this bounds staleness for a state dropped silently. */
const HEALTH_TTL_MS = 1_000;

/**
 * The checker's verdicts, cached in memory per pool for the data plane. Every Healthy <-> Unhealthy
 * event drops its pool's entry, so a new probe result steers the very next request.
 */
export class HealthSource {
  readonly #reader: HealthReader;
  readonly #cache = new Map<string, PoolHealthSnapshot>();
  readonly #pending = new Map<string, Promise<PoolHealthSnapshot>>();
  readonly #unsubscribe: () => void;
  readonly #clock: Clock;
  /** Moves whenever a cached snapshot is dropped or replaced: what was worked out from the old ones is stale. */
  #version = 0;
  /** The last synchronous answer per list of pools (the router keeps one list per resolved load balancer). */
  readonly #lastAnswer = new WeakMap<readonly Pool[], ReadonlyMap<string, PoolHealthSnapshot>>();

  constructor(reader: HealthReader, bus: HealthEventBus, clock: Clock) {
    this.#reader = reader;
    this.#clock = clock;
    // Forgotten once the transition has committed: a reload before that would cache the old verdict.
    this.#unsubscribe = bus.subscribe(async (event, scope) => scope.afterCommit(() => this.#forget(event.poolId)));
  }

  /**
   * Fresh snapshots of these pools by id: synchronous when all are cached (the hot path), else a promise
   * that reads only the pools not cached.
   */
  snapshots(
    pools: readonly Pool[],
    now = this.#clock.now(),
  ): ReadonlyMap<string, PoolHealthSnapshot> | Promise<ReadonlyMap<string, PoolHealthSnapshot>> {
    // The hot path asks again and again for the same pools, whose snapshots change about once a second.
    const last = this.#lastAnswer.get(pools);
    if (last && this.#unchanged(pools, last, now)) return last;
    const found = new Map<string, PoolHealthSnapshot>();
    const missing: string[] = [];
    for (const pool of pools) {
      const snapshot = this.peek(pool.id, now);
      if (snapshot) found.set(pool.id, snapshot);
      else missing.push(pool.id);
    }
    if (missing.length === 0) {
      this.#lastAnswer.set(pools, found);
      return found;
    }
    return Promise.all(missing.map((id) => this.#load(id))).then((loaded) => {
      missing.forEach((id, index) => found.set(id, loaded[index]!));
      return found;
    });
  }

  /** Whether every pool's fresh snapshot is the one in `last`. */
  #unchanged(pools: readonly Pool[], last: ReadonlyMap<string, PoolHealthSnapshot>, now: number): boolean {
    for (const pool of pools) if (this.peek(pool.id, now) !== last.get(pool.id)) return false;
    return true;
  }

  get version(): number {
    return this.#version;
  }

  /** Until when these snapshots are fresh (then they are read again). */
  freshUntil(snapshots: ReadonlyMap<string, PoolHealthSnapshot>): number {
    let until = Number.POSITIVE_INFINITY;
    for (const snapshot of snapshots.values()) until = Math.min(until, snapshot.at + HEALTH_TTL_MS);
    return until;
  }

  peek(poolId: string, now = this.#clock.now()): PoolHealthSnapshot | undefined {
    const snapshot = this.#cache.get(poolId);
    return snapshot && now - snapshot.at < HEALTH_TTL_MS ? snapshot : undefined;
  }

  clear(): void {
    this.#version++;
    this.#cache.clear();
    this.#pending.clear();
  }

  close(): void {
    this.#unsubscribe();
    this.clear();
  }

  #forget(poolId: string): void {
    this.#version++;
    this.#cache.delete(poolId);
    this.#pending.delete(poolId);
  }

  #load(poolId: string): Promise<PoolHealthSnapshot> {
    let pending = this.#pending.get(poolId);
    if (pending) return pending;
    pending = (async () => {
      const [states, pool] = await Promise.all([this.#reader.originStates(poolId), this.#reader.poolState(poolId)]);
      const unhealthyOrigins = new Set<string>();
      for (const state of states.values()) if (!state.healthy) unhealthyOrigins.add(state.originName);
      const snapshot = { poolHealthy: pool?.healthy ?? true, unhealthyOrigins, at: this.#clock.now() };
      // Only kept if no event dropped this pool while it was read.
      if (this.#pending.get(poolId) === pending) {
        this.#version++;
        this.#cache.set(poolId, snapshot);
        this.#pending.delete(poolId);
      }
      return snapshot;
    })();
    this.#pending.set(poolId, pending);
    return pending;
  }
}
