import { foldOnConflict, SAMPLE_RANGES, SampleRollup, type SqlDatabase, type SqlExecutor } from '../../db/index.ts';
import type { OriginState } from './health-state.ts';
import type { Clock } from '../../shared/clock.ts';

/**
 * Health samples for the dashboard's charts: how many checks each origin (and its pool, origin_name '') had
 * in a time bucket, how many were healthy, and the round-trip times' sum, count and maximum.
 *
 * Retention and downsampling: every check lands in its minute (resolution 60), written in the transaction
 * that records the check; minute rows become hour rows after a day and go after a week
 * (src/db/minute-hour-samples.ts, shared with the functions' request samples). For 10,000 pools of two
 * origins checked every minute that is at most 30,000 rows per minute of the last day (43 M rows) plus
 * 30,000 per hour of the week (5 M rows); one row per (origin, bucket) whatever the check interval.
 */
export const HEALTH_RANGES = SAMPLE_RANGES;
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

const TABLE = {
  table: 'lb_health_samples',
  keys: ['pool_id', 'origin_name'],
  counters: { checks: 'sum', healthy: 'sum', rtt_sum: 'sum', rtt_count: 'sum', rtt_max: 'max' },
  lock: 'load-balancing:health-samples-rollup',
} as const;
const UPSERT = `INSERT INTO lb_health_samples (pool_id, origin_name, resolution, bucket, checks, healthy, rtt_sum, rtt_count, rtt_max)
  VALUES (?, ?, 60, ?, 1, ?, ?, ?, ?) ${foldOnConflict(TABLE)}`;

export class HealthSamples extends SampleRollup {
  readonly #db: SqlDatabase;

  readonly #clock: Clock;

  constructor(db: SqlDatabase, clock: Clock) {
    super(db, TABLE);
    this.#clock = clock;
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
  async series(poolId: string, range: HealthRange, nowMs = this.#clock.now()): Promise<HealthSamplePoint[]> {
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

  /** A deleted pool's samples go with it. */
  async forget(tx: SqlExecutor, poolId: string): Promise<void> {
    await tx.run('DELETE FROM lb_health_samples WHERE pool_id = ?', [poolId]);
  }
}

function minuteOf(iso: string): number {
  return Math.floor(Date.parse(iso) / 60_000) * 60;
}
