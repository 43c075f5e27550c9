import { toResolved, type LoadBalancerDirectory, type ResolvedLoadBalancer } from './directory.ts';
import type { Clock } from '../../shared/clock.ts';
import type { SteeringPlan } from './steering-plan.ts';

/** Entries are re-read at least this often, so a configuration change is seen within 1 s even unsignalled. */
const ROUTE_TTL_MS = 500;
/** Hostnames nobody configured are remembered too (scanners), but the cache stays bounded. */
const MAX_ENTRIES = 10_000;

export interface RouteCacheEntry {
  readonly value: ResolvedLoadBalancer | undefined;
  readonly at: number;
  /** The router's steering worked out for this entry's load balancer (it goes with the entry). */
  plan: SteeringPlan | undefined;
}

/**
 * Hostname -> resolved load balancer, kept in memory so the hot path reads no database. The directory's
 * change signal empties it at once; the TTL bounds staleness for anything the signal does not cover.
 * Concurrent misses for one hostname share one lookup.
 */
export class RouteCache {
  readonly #directory: LoadBalancerDirectory;
  readonly #entries = new Map<string, RouteCacheEntry>();
  readonly #pending = new Map<string, Promise<ResolvedLoadBalancer | undefined>>();
  #generation = 0;
  readonly #unsubscribe: () => void;
  readonly #clock: Clock;

  constructor(directory: LoadBalancerDirectory, clock: Clock) {
    this.#directory = directory;
    this.#clock = clock;
    this.#unsubscribe = directory.onChange(() => this.clear());
  }

  /** The cached answer when fresh (no await on the hot path), else undefined. */
  peek(hostname: string, now = this.#clock.now()): RouteCacheEntry | undefined {
    const entry = this.#entries.get(hostname);
    return entry && now - entry.at < ROUTE_TTL_MS ? entry : undefined;
  }

  async resolve(hostname: string): Promise<ResolvedLoadBalancer | undefined> {
    const fresh = this.peek(hostname);
    if (fresh) return fresh.value;
    let pending = this.#pending.get(hostname);
    if (!pending) {
      const generation = this.#generation;
      pending = this.#directory.findByHostname(hostname).then(
        (route) => {
          const value = route && toResolved(route);
          this.#pending.delete(hostname);
          // A change signalled during the lookup may make this answer stale: use it once, do not keep it.
          if (generation === this.#generation) this.#store(hostname, value);
          return value;
        },
        (error: unknown) => {
          this.#pending.delete(hostname);
          throw error;
        },
      );
      this.#pending.set(hostname, pending);
    }
    return pending;
  }

  clear(): void {
    this.#generation++;
    this.#entries.clear();
    this.#pending.clear();
  }

  close(): void {
    this.#unsubscribe();
    this.clear();
  }

  #store(hostname: string, value: ResolvedLoadBalancer | undefined): void {
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(hostname, { value, at: this.#clock.now(), plan: undefined });
  }
}
