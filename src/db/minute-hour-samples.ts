import type { SqlDatabase } from './sql.ts';

/**
 * Time series for the dashboard's charts (pool health, requests per function), kept the same way: a row per
 * key and bucket, with `resolution` 60 (a minute) or 3600 (an hour) and `bucket` the bucket's start in Unix
 * seconds. Minute rows are kept MINUTE_RETENTION_S (24 hours), then rolled up into hour rows, which are kept
 * HOUR_RETENTION_S (7 days). The last hour is therefore drawn per minute, the last day per 5 minutes (minute
 * rows grouped), the last week per hour.
 */
export const MINUTE_RETENTION_S = 24 * 3600;
export const HOUR_RETENTION_S = 7 * 24 * 3600;
/** A roll-up runs at most this often per process (each one is a whole-table pass). */
const ROLLUP_EVERY_MS = 10 * 60_000;

/** The ranges a chart asks for, and the step its points are drawn at. */
export const SAMPLE_RANGES = {
  hour: { seconds: 3600, step: 60 },
  day: { seconds: 24 * 3600, step: 300 },
  week: { seconds: 7 * 24 * 3600, step: 3600 },
} as const;
export type SampleRange = keyof typeof SAMPLE_RANGES;

/** A samples table: besides `resolution` and `bucket`, its key columns and its counters. */
export interface SampleTable {
  table: string;
  /** What a row is about (pool and origin, account and script), in the unique key's order. */
  keys: readonly string[];
  /** How two rows of one key and bucket fold into one: counters added up, or the larger kept. */
  counters: Readonly<Record<string, 'sum' | 'max'>>;
  /** The lock nodes sharing a database take to roll up one at a time (an advisory lock on PostgreSQL). */
  lock: string;
}

/** The `ON CONFLICT ... DO UPDATE` that folds an inserted row into the row of its key and bucket. */
export function foldOnConflict(spec: SampleTable): string {
  const { table } = spec;
  const sets = Object.entries(spec.counters).map(([column, fold]) =>
    fold === 'sum'
      ? `${column} = ${table}.${column} + excluded.${column}`
      : `${column} = CASE WHEN excluded.${column} > ${table}.${column} THEN excluded.${column} ELSE ${table}.${column} END`,
  );
  return `ON CONFLICT (${[...spec.keys, 'resolution', 'bucket'].join(', ')}) DO UPDATE SET ${sets.join(', ')}`;
}

/**
 * A samples table's upkeep: rolls old minute rows into hour rows and drops hour rows past their retention.
 * The tables' own classes (pool health, function requests) extend it with their writes and reads.
 */
export class SampleRollup {
  readonly #db: SqlDatabase;
  readonly #spec: SampleTable;
  #lastRollup = 0;

  constructor(db: SqlDatabase, spec: SampleTable) {
    this.#db = db;
    this.#spec = spec;
  }

  /** A roll-up, unless this process ran one less than ten minutes ago. */
  async maybeRollUp(nowMs: number): Promise<void> {
    if (nowMs - this.#lastRollup < ROLLUP_EVERY_MS) return;
    this.#lastRollup = nowMs;
    await this.rollUp(nowMs);
  }

  async rollUp(nowMs: number): Promise<void> {
    const { table, keys, counters } = this.#spec;
    const now = Math.floor(nowMs / 1000);
    // Whole hours only, so an hour row never gets minutes of the same hour twice.
    const cutoff = Math.floor((now - MINUTE_RETENTION_S) / 3600) * 3600;
    const columns = Object.keys(counters);
    const folded = Object.entries(counters).map(([column, fold]) => `${fold === 'sum' ? 'SUM' : 'MAX'}(${column})`);
    const key = keys.join(', ');
    await this.#db.transaction(async (tx) => {
      await tx.lock(this.#spec.lock);
      await tx.run(
        `INSERT INTO ${table} (${key}, resolution, bucket, ${columns.join(', ')})
         SELECT ${key}, 3600, (bucket / 3600) * 3600, ${folded.join(', ')}
         FROM ${table} WHERE resolution = 60 AND bucket < ?
         GROUP BY ${key}, (bucket / 3600) * 3600
         ${foldOnConflict(this.#spec)}`,
        [cutoff],
      );
      await tx.run(`DELETE FROM ${table} WHERE resolution = 60 AND bucket < ?`, [cutoff]);
      await tx.run(`DELETE FROM ${table} WHERE resolution = 3600 AND bucket < ?`, [now - HOUR_RETENTION_S]);
    });
  }
}
