import type { SqlDatabase, SqlExecutor } from '../../db/index.ts';
import type { OriginState } from './health-state.ts';

/**
 * Health samples for the dashboard's charts: how many checks each origin (and its pool, origin_name '') had
 * in a time bucket, how many were healthy, and the round-trip times' sum, count and maximum.
 *
 * Retention and downsampling: every check lands in its minute (resolution 60), written in the transaction
 * that records the check. Minute rows older than MINUTE_RETENTION_S are rolled up into hour rows (resolution
 * 3600) and deleted; hour rows older than HOUR_RETENTION_S are deleted. The last hour is therefore drawn at
 * one-minute resolution, the last day at five minutes (minute rows grouped), the last week at one hour. For
 * 10,000 pools of two origins checked every minute that is at most 30,000 rows per minute of the last day
 * (43 M rows) plus 30,000 per hour of the week (5 M rows); one row per (origin, bucket) whatever the check
 * interval.
 */
export const MINUTE_RETENTION_S = 24 * 3600;
export const HOUR_RETENTION_S = 7 * 24 * 3600;
const ROLLUP_EVERY_MS = 10 * 60_000;

export const HEALTH_RANGES = {
  hour: { seconds: 3600, step: 60 },
  day: { seconds: 24 * 3600, step: 300 },
  week: { seconds: 7 * 24 * 3600, step: 3600 },
} as const;
export type HealthRange = keyof typeof HEALTH_RANGES;

export interface HealthSamplePoint {
  /** Unix seconds: the start of the bucket. */
  t: number;
  /** '' for the pool itself. */
  origin: string;
  checks: number;
  /** Healthy share of the checks, 0..1. */
  healthy: number;
  rtt_avg_ms: number | null;
  rtt_max_ms: number | null;
}

const UPSERT = `INSERT INTO lb_health_samples (pool_id, origin_name, resolution, bucket, checks, healthy, rtt_sum, rtt_count, rtt_max)
  VALUES (?, ?, 60, ?, 1, ?, ?, ?, ?)
  ON CONFLICT (pool_id, origin_name, resolution, bucket) DO UPDATE SET
    checks = lb_health_samples.checks + 1,
    healthy = lb_health_samples.healthy + excluded.healthy,
    rtt_sum = lb_health_samples.rtt_sum + excluded.rtt_sum,
    rtt_count = lb_health_samples.rtt_count + excluded.rtt_count,
    rtt_max = CASE WHEN excluded.rtt_max > lb_health_samples.rtt_max THEN excluded.rtt_max ELSE lb_health_samples.rtt_max END`;

export class HealthSamples {
  readonly #db: SqlDatabase;
  #lastRollup = 0;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  /** One origin's check, in the transaction that records it. */
  async addOrigin(tx: SqlExecutor, poolId: string, state: OriginState, atIso: string): Promise<void> {
    const rtt = state.rttMs;
    await tx.run(UPSERT, [
      poolId,
      state.originName,
      minuteOf(atIso),
      state.healthy ? 1 : 0,
      rtt ?? 0,
      rtt === null ? 0 : 1,
      rtt ?? 0,
    ]);
  }

  /** The pool's health after a batch of its checks. */
  async addPool(tx: SqlExecutor, poolId: string, healthy: boolean, atIso: string): Promise<void> {
    await tx.run(UPSERT, [poolId, '', minuteOf(atIso), healthy ? 1 : 0, 0, 0, 0]);
  }

  /** A pool's points over `range`, one per origin (and the pool) per step. */
  async series(poolId: string, range: HealthRange, nowMs = Date.now()): Promise<HealthSamplePoint[]> {
    const { seconds, step } = HEALTH_RANGES[range];
    const since = Math.floor(nowMs / 1000) - seconds;
    const rows = await this.#db.all<{
      t: number;
      origin: string;
      checks: number;
      healthy: number;
      rtt_sum: number;
      rtt_count: number;
      rtt_max: number;
    }>(
      `SELECT (bucket / ${step}) * ${step} AS t, origin_name AS origin, SUM(checks) AS checks, SUM(healthy) AS healthy,
         SUM(rtt_sum) AS rtt_sum, SUM(rtt_count) AS rtt_count, MAX(rtt_max) AS rtt_max
       FROM lb_health_samples WHERE pool_id = ? AND bucket >= ?
       GROUP BY (bucket / ${step}) * ${step}, origin_name ORDER BY 1, 2`,
      [poolId, since - (since % step)],
    );
    return rows.map((row) => {
      const rttCount = Number(row.rtt_count);
      return {
        t: Number(row.t),
        origin: row.origin,
        checks: Number(row.checks),
        healthy: Number(row.checks) === 0 ? 0 : Number(row.healthy) / Number(row.checks),
        rtt_avg_ms: rttCount === 0 ? null : Number(row.rtt_sum) / rttCount,
        rtt_max_ms: rttCount === 0 ? null : Number(row.rtt_max),
      };
    });
  }

  /** Rolls minute rows past their retention into hours and drops old hours; at most every ten minutes. */
  async maybeRollUp(nowMs = Date.now()): Promise<void> {
    if (nowMs - this.#lastRollup < ROLLUP_EVERY_MS) return;
    this.#lastRollup = nowMs;
    await this.rollUp(nowMs);
  }

  async rollUp(nowMs = Date.now()): Promise<void> {
    const now = Math.floor(nowMs / 1000);
    // Whole hours only, so an hour row never gets minutes of the same hour twice.
    const cutoff = Math.floor((now - MINUTE_RETENTION_S) / 3600) * 3600;
    await this.#db.transaction(async (tx) => {
      // Nodes sharing a database roll up one at a time (an advisory lock on PostgreSQL).
      await tx.lock('load-balancing:health-samples-rollup');
      await tx.run(
        `INSERT INTO lb_health_samples (pool_id, origin_name, resolution, bucket, checks, healthy, rtt_sum, rtt_count, rtt_max)
         SELECT pool_id, origin_name, 3600, (bucket / 3600) * 3600, SUM(checks), SUM(healthy), SUM(rtt_sum), SUM(rtt_count), MAX(rtt_max)
         FROM lb_health_samples WHERE resolution = 60 AND bucket < ?
         GROUP BY pool_id, origin_name, (bucket / 3600) * 3600
         ON CONFLICT (pool_id, origin_name, resolution, bucket) DO UPDATE SET
           checks = lb_health_samples.checks + excluded.checks,
           healthy = lb_health_samples.healthy + excluded.healthy,
           rtt_sum = lb_health_samples.rtt_sum + excluded.rtt_sum,
           rtt_count = lb_health_samples.rtt_count + excluded.rtt_count,
           rtt_max = CASE WHEN excluded.rtt_max > lb_health_samples.rtt_max THEN excluded.rtt_max ELSE lb_health_samples.rtt_max END`,
        [cutoff],
      );
      await tx.run('DELETE FROM lb_health_samples WHERE resolution = 60 AND bucket < ?', [cutoff]);
      await tx.run('DELETE FROM lb_health_samples WHERE resolution = 3600 AND bucket < ?', [now - HOUR_RETENTION_S]);
    });
  }

  /** A deleted pool's samples go with it. */
  async forget(tx: SqlExecutor, poolId: string): Promise<void> {
    await tx.run('DELETE FROM lb_health_samples WHERE pool_id = ?', [poolId]);
  }
}

function minuteOf(iso: string): number {
  return Math.floor(Date.parse(iso) / 60_000) * 60;
}
