import type { EgressPolicy } from '../../egress/index.ts';
import type { BackgroundService } from '../../shared/background-service.ts';
import type { Logger } from '../../shared/logger.ts';
import type { Monitor } from '../monitor-schemas.ts';
import type { MonitorStore } from '../monitor-store.ts';
import type { Pool } from '../pool-schemas.ts';
import type { PoolStore } from '../pool-store.ts';
import type { PoolPlan } from './health-state.ts';
import type { CheckOutcome, HealthStore } from './health-store.ts';
import { isProbed, probe } from './probe.ts';
import type { ProbeTarget } from './probe-types.ts';
import { probeTarget, targetKey } from './targets.ts';
import { TimerHeap } from './timer-heap.ts';
import type { LedgeMetrics } from '../../shared/ledge-metrics.ts';
import type { Clock, ClockTimer } from '../../shared/clock.ts';
import { outsideRequest } from '../../shared/request-context.ts';

/** Results are written at most every FLUSH_DELAY_MS, in one transaction per batch. */
const FLUSH_DELAY_MS = 50;
/** Minimum time between two scheduler wake-ups. */
const TICK_MS = 20;

interface Job {
  due: number;
  poolId: string;
  origin: { name: string; address: string };
  target: ProbeTarget;
  key: string;
  intervalMs: number;
  cancelled: boolean;
  inFlight: boolean;
  /** Until the first probe ran: the round after it gets a random phase (see #tick). */
  fresh: boolean;
  /** Whether this node owned the origin when last asked (see ownersChanged). */
  mine: boolean;
}

export interface CheckerStats {
  origins: number;
  probes: number;
  /** Probes skipped because the previous check of the same origin was still running. */
  skipped: number;
  maxLateMs: number;
  lateOver1s: number;
}

/**
 * The health checker: one timer for all origins. Jobs sit in a min-heap by due time; each tick pops
 * what is due, starts those probes and pushes the jobs back one interval later (drift-free: from the
 * due time, not from completion). Results are batched and recorded in one transaction per batch.
 */
export class HealthChecker implements BackgroundService {
  readonly name = 'load-balancing health checker';
  readonly #pools: PoolStore;
  readonly #monitors: MonitorStore;
  readonly #health: HealthStore;
  readonly #logger: Logger;
  readonly #egress: EgressPolicy;
  readonly #metrics: LedgeMetrics | undefined;
  readonly #owns: (originKey: string) => boolean;
  readonly #clock: Clock;
  readonly #heap = new TimerHeap<Job>();
  readonly #jobs = new Map<string, Map<string, Job>>();
  readonly #plans = new Map<string, PoolPlan>();
  readonly #stats: CheckerStats = { origins: 0, probes: 0, skipped: 0, maxLateMs: 0, lateOver1s: 0 };
  #pending: CheckOutcome[] = [];
  #flushTimer: NodeJS.Timeout | undefined;
  /** The batch being recorded (batches are written one at a time, in order). */
  #recording: Promise<void> = Promise.resolve();
  #timer: ClockTimer | undefined;
  #armedFor = Infinity;
  #running = false;
  #lastTick = 0;
  /** Probes started and not answered yet, and who waits for there to be none (see settled()). */
  #probing = 0;
  #onIdle: (() => void)[] = [];

  constructor(deps: {
    pools: PoolStore;
    monitors: MonitorStore;
    health: HealthStore;
    egress: EgressPolicy;
    logger: Logger;
    metrics?: LedgeMetrics | undefined;
    /**
     * Whether this node probes an origin (`<pool id>/<origin name>`): with several nodes on one database each
     * origin is probed by one of them (src/cluster). Every node keeps every job scheduled, so a dead node's
     * origins are probed by their new owner at their next due time. Default: this node probes all.
     */
    owns?: ((originKey: string) => boolean) | undefined;
    /** Due times run on it (tests advance their own); probe deadlines and write batching are real time. */
    clock: Clock;
  }) {
    this.#clock = deps.clock;
    this.#metrics = deps.metrics;
    this.#owns = deps.owns ?? (() => true);
    this.#egress = deps.egress;
    this.#pools = deps.pools;
    this.#monitors = deps.monitors;
    this.#health = deps.health;
    this.#logger = deps.logger;
  }

  async start(): Promise<void> {
    this.#running = true;
    const monitored = await this.#pools.listMonitored();
    const monitors = await this.#monitors.getMany(monitored.map((m) => m.pool.monitor ?? ''));
    const now = this.#clock.monotonic();
    // Spread the first round over one interval so a restart does not probe every origin at once.
    for (const [index, { accountId, pool }] of monitored.entries()) {
      const monitor = pool.monitor ? monitors.get(pool.monitor) : undefined;
      const spread = monitor ? (index / monitored.length) * monitor.interval * 1000 : 0;
      await this.#install(accountId, pool.id, pool, monitor, now + spread, false);
    }
    this.#arm();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#flush();
    await this.#recording;
    for (const jobs of this.#jobs.values()) for (const job of jobs.values()) job.cancelled = true;
    this.#jobs.clear();
    this.#plans.clear();
    this.#heap.clear();
  }

  /** Called after a pool was created, changed or deleted. */
  async refreshPool(accountId: string, poolId: string): Promise<void> {
    if (!this.#running) return;
    const pool = await this.#pools.get(accountId, poolId);
    const monitor = pool?.monitor ? await this.#monitors.get(accountId, pool.monitor) : undefined;
    await this.#install(accountId, poolId, pool, monitor, this.#clock.monotonic(), true);
    this.#arm();
  }

  /** Called after a monitor changed: every pool using it is re-planned. */
  async refreshMonitor(accountId: string, monitorId: string): Promise<void> {
    if (!this.#running) return;
    for (const pool of await this.#pools.listByMonitor(accountId, monitorId))
      await this.refreshPool(accountId, pool.id);
  }

  /**
   * The live nodes changed: origins this node has just taken over (their owner died or left) are probed at
   * once, so one is never unprobed for longer than its interval plus the time to notice the owner is gone.
   */
  ownersChanged(): void {
    if (!this.#running) return;
    const now = this.#clock.monotonic();
    for (const jobs of this.#jobs.values()) {
      for (const [name, job] of jobs) {
        const mine = this.#owns(`${job.poolId}/${job.origin.name}`);
        const takenOver = mine && !job.mine;
        job.mine = mine;
        if (!takenOver || job.inFlight || job.due <= now) continue;
        // The heap cannot move an entry: a copy due now replaces the job.
        const replacement = { ...job, due: now };
        job.cancelled = true;
        jobs.set(name, replacement);
        this.#heap.push(replacement);
      }
    }
    this.#arm();
  }

  /**
   * Resolves once no probe is in flight and every result so far is recorded: a test that advances the clock
   * by one interval then knows the round it started is over (probes are real I/O, on real time).
   */
  async settled(): Promise<void> {
    while (this.#probing > 0) await new Promise<void>((resolve) => this.#onIdle.push(resolve));
    await this.#flush();
  }

  stats(): CheckerStats {
    return { ...this.#stats, origins: [...this.#jobs.values()].reduce((n, jobs) => n + jobs.size, 0) };
  }

  resetStats(): void {
    Object.assign(this.#stats, { probes: 0, skipped: 0, maxLateMs: 0, lateOver1s: 0 });
  }

  async #install(
    accountId: string,
    poolId: string,
    pool: Pool | undefined,
    monitor: Monitor | undefined,
    firstDue: number,
    fresh: boolean,
  ): Promise<void> {
    const previous = this.#jobs.get(poolId) ?? new Map<string, Job>();
    const checked = pool !== undefined && pool.enabled && monitor !== undefined && isProbed(monitor.type);
    if (!checked) {
      for (const job of previous.values()) job.cancelled = true;
      this.#jobs.delete(poolId);
      this.#plans.delete(poolId);
      if (pool) await this.#health.forget(poolId);
      return;
    }
    const origins = pool.origins.filter((o) => o.enabled);
    const plan: PoolPlan = {
      accountId,
      poolId,
      poolName: pool.name,
      legacyEmail: pool.notification_email,
      minimumOrigins: pool.minimum_origins,
      consecutiveUp: monitor.consecutive_up,
      consecutiveDown: monitor.consecutive_down,
      origins: origins.map((o) => ({ name: o.name, address: o.address })),
    };
    const jobs = new Map<string, Job>();
    for (const origin of origins) {
      const target = probeTarget(monitor, origin, poolId);
      const key = targetKey(target, monitor.interval);
      const kept = previous.get(origin.name);
      if (kept && kept.key === key && !kept.cancelled) {
        jobs.set(origin.name, kept);
        continue;
      }
      const job: Job = {
        due: firstDue,
        poolId,
        origin: { name: origin.name, address: origin.address },
        target,
        key,
        intervalMs: monitor.interval * 1000,
        cancelled: false,
        inFlight: false,
        fresh,
        mine: true,
      };
      jobs.set(origin.name, job);
      this.#heap.push(job);
    }
    for (const [name, job] of previous) if (jobs.get(name) !== job) job.cancelled = true;
    this.#jobs.set(poolId, jobs);
    this.#plans.set(poolId, plan);
    await this.#health.reconcile(plan);
  }

  #arm(): void {
    const next = this.#heap.peek();
    if (!this.#running || !next || next.due >= this.#armedFor) return;
    this.#timer?.cancel();
    this.#armedFor = next.due;
    // Wake-ups are at least TICK_MS apart: probes due close together start in one tick.
    const now = this.#clock.monotonic();
    const wait = Math.max(next.due - now, this.#lastTick + TICK_MS - now, 0);
    this.#timer = this.#clock.schedule(wait, () => this.#tick());
  }

  #tick(): void {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    const now = this.#clock.monotonic();
    this.#lastTick = now;
    for (let job = this.#heap.peek(); job && job.due <= now + 1; job = this.#heap.peek()) {
      this.#heap.pop();
      if (job.cancelled) continue;
      if (job.inFlight) {
        this.#stats.skipped++;
      } else {
        job.mine = this.#owns(`${job.poolId}/${job.origin.name}`);
        if (job.mine) this.#launch(job, now);
      }
      job.due += job.intervalMs;
      if (job.fresh) {
        // A new origin is checked at once; its later rounds get a random phase so origins created
        // together (a restart, a script creating pools) do not probe in one burst forever after.
        job.fresh = false;
        job.due += Math.random() * job.intervalMs;
      }
      // After a stall (e.g. the process was suspended) skip missed rounds instead of bursting.
      if (job.due <= now) job.due = now + job.intervalMs;
      this.#heap.push(job);
    }
    this.#arm();
  }

  #launch(job: Job, now: number): void {
    const late = now - job.due;
    this.#stats.probes++;
    if (late > this.#stats.maxLateMs) this.#stats.maxLateMs = late;
    if (late > 1000) this.#stats.lateOver1s++;
    job.inFlight = true;
    this.#probing++;
    void probe(job.target, this.#egress)
      .then((result) => {
        job.inFlight = false;
        const plan = this.#plans.get(job.poolId);
        if (job.cancelled || !this.#running || !plan) return;
        this.#metrics?.probe(plan.poolName, job.origin.name, result.healthy, result.rttMs);
        this.#pending.push({ plan, origin: job.origin, result });
        // A batching delay for the writes, not a schedule: real time, whatever the clock.
        this.#flushTimer ??= outsideRequest(() => setTimeout(() => void this.#flush(), FLUSH_DELAY_MS));
      })
      .finally(() => {
        if (--this.#probing > 0) return;
        for (const resolve of this.#onIdle.splice(0)) resolve();
      });
  }

  /**
   * Writes the pending results. Batches are recorded one after the other (a batch waits for the one
   * before it), so the results of one origin are applied in the order they came in.
   */
  #flush(): Promise<void> {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 0) return this.#recording;
    this.#recording = this.#recording.then(async () => {
      try {
        await this.#health.record(batch);
      } catch (error) {
        this.#logger.error('health results could not be recorded', { err: error, results: batch.length });
      }
    });
    return this.#recording;
  }
}
