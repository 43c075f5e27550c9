import { foldOnConflict, SAMPLE_RANGES, SampleRollup, type SqlDatabase } from '../db/index.ts';
import type { FunctionGrowth } from '../workerd/index.ts';
import type { Clock } from '../shared/clock.ts';

/**
 * Request samples per function for the dashboard's charts: how many requests each script answered in a time
 * bucket, how many threw, and its responses by status class (1xx..5xx).
 *
 * Where they come from: the per-script counts each workerd process keeps (src/workerd/isolate/metrics.ts), scraped by
 * src/workerd/function-metrics.ts every SAMPLE_EVERY_MS (and before each chart read); what grew since the last scrape
 * is added to the scrape's minute. Nodes sharing a database add into the same rows, so a chart shows the whole
 * cluster.
 *
 * Retention and downsampling, as for pool health (src/db/minute-hour-samples.ts): minute rows are kept 24 hours,
 * then rolled up into hour rows, which are kept 7 days. The last hour is drawn per minute, the last day per
 * 5 minutes, the last week per hour. A row exists only for a minute in
 * which the script answered something: an idle script costs nothing, a busy one at most 1,440 minute rows plus
 * 168 hour rows.
 */
export const SAMPLE_EVERY_MS = 15_000;

export const REQUEST_RANGES = SAMPLE_RANGES;
export type RequestRange = keyof typeof REQUEST_RANGES;

/** What one script's counts grew by since the last scrape; `status[i]` is class (i+1)xx. */
export type { FunctionGrowth };

export interface RequestSamplePoint {
  /** Unix seconds: the start of the bucket. */
  t: number;
  requests: number;
  exceptions: number;
  status: { '1xx': number; '2xx': number; '3xx': number; '4xx': number; '5xx': number };
}

const TABLE = {
  table: 'worker_request_samples',
  keys: ['account_id', 'script_name'],
  counters: { requests: 'sum', exceptions: 'sum', s1xx: 'sum', s2xx: 'sum', s3xx: 'sum', s4xx: 'sum', s5xx: 'sum' },
  lock: 'workers:request-samples-rollup',
} as const;
const COUNTS = Object.keys(TABLE.counters).join(', ');
const ADD_ON_CONFLICT = foldOnConflict(TABLE);

export class FunctionSamples extends SampleRollup {
  readonly #db: SqlDatabase;

  readonly #clock: Clock;

  constructor(db: SqlDatabase, clock: Clock) {
    super(db, TABLE);
    this.#clock = clock;
    this.#db = db;
  }

  /** One scrape's growth, into the minute it was taken in (one transaction). */
  async add(growth: readonly FunctionGrowth[], nowMs = this.#clock.now()): Promise<void> {
    const grew = growth.filter((g) => g.requests > 0 || g.status.some((n) => n > 0));
    if (grew.length > 0) {
      const minute = Math.floor(nowMs / 60_000) * 60;
      await this.#db.transaction(async (tx) => {
        for (const g of grew) {
          await tx.run(
            `INSERT INTO worker_request_samples (account_id, script_name, resolution, bucket, ${COUNTS})
             VALUES (?, ?, 60, ?, ?, ?, ?, ?, ?, ?, ?) ${ADD_ON_CONFLICT}`,
            [g.account, g.script, minute, g.requests, g.exceptions, ...[0, 1, 2, 3, 4].map((i) => g.status[i] ?? 0)],
          );
        }
      });
    }
    await this.maybeRollUp(nowMs);
  }

  /** A script's points over `range`, one per step that saw traffic. */
  async series(
    accountId: string,
    script: string,
    range: RequestRange,
    nowMs = this.#clock.now(),
  ): Promise<RequestSamplePoint[]> {
    const { seconds, step } = REQUEST_RANGES[range];
    const since = Math.floor(nowMs / 1000) - seconds;
    const rows = await this.#db.all<Record<'t' | 'requests' | 'exceptions' | 's1' | 's2' | 's3' | 's4' | 's5', number>>(
      `SELECT (bucket / ${step}) * ${step} AS t, SUM(requests) AS requests, SUM(exceptions) AS exceptions,
         SUM(s1xx) AS s1, SUM(s2xx) AS s2, SUM(s3xx) AS s3, SUM(s4xx) AS s4, SUM(s5xx) AS s5
       FROM worker_request_samples WHERE account_id = ? AND script_name = ? AND bucket >= ?
       GROUP BY (bucket / ${step}) * ${step} ORDER BY 1`,
      [accountId, script, since - (since % step)],
    );
    return rows.map((row) => ({
      t: Number(row.t),
      requests: Number(row.requests),
      exceptions: Number(row.exceptions),
      status: {
        '1xx': Number(row.s1),
        '2xx': Number(row.s2),
        '3xx': Number(row.s3),
        '4xx': Number(row.s4),
        '5xx': Number(row.s5),
      },
    }));
  }

  /** A deleted script's samples go with it (a new script of the same name starts with an empty chart). */
  async forget(accountId: string, script: string): Promise<void> {
    await this.#db.run('DELETE FROM worker_request_samples WHERE account_id = ? AND script_name = ?', [
      accountId,
      script,
    ]);
  }
}
