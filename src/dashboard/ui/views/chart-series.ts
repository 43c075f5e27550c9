import type { TimeRange } from '../ui-kit.ts';

/**
 * The charts' data shaped for drawing, with no DOM and no chart library: the columns uPlot draws (x values,
 * then one column per series) and the totals said as text. charts.ts loads the figures and draws these.
 */

export const RANGE_SECONDS: Record<TimeRange, number> = { hour: 3600, day: 86_400, week: 604_800 };
const HOUR = 3600;

/** Alert deliveries per hour, as the server counts them (`history/hourly`). */
export interface HourlyDeliveries {
  hour: string;
  delivered: number;
  failed: number;
}

/** One bar per hour from `since` to `nowMs` (empty hours are zero): delivered and failed attempts. */
export function deliverySeries(
  counts: HourlyDeliveries[],
  since: string,
  nowMs: number,
): { xs: number[]; delivered: number[]; failed: number[]; summary: string } {
  const start = Math.floor(Date.parse(since) / 1000 / HOUR) * HOUR;
  const end = Math.floor(nowMs / 1000 / HOUR) * HOUR;
  const slots = Math.max(1, (end - start) / HOUR + 1);
  const delivered = new Array<number>(slots).fill(0);
  const failed = new Array<number>(slots).fill(0);
  for (const count of counts) {
    const slot = Math.floor((Date.parse(count.hour) / 1000 - start) / HOUR);
    if (slot < 0 || slot >= slots) continue;
    delivered[slot]! += count.delivered;
    failed[slot]! += count.failed;
  }
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  return {
    xs: Array.from({ length: slots }, (_, i) => start + i * HOUR),
    delivered,
    failed,
    summary: `${sum(delivered)} delivered and ${sum(failed)} failed attempts in the period.`,
  };
}

/** A pool's health history (`…/health/history`): per step and origin ('' is the pool itself). */
export interface HealthHistory {
  range: TimeRange;
  step_seconds: number;
  points: {
    t: number;
    origin: string;
    checks: number;
    healthy: number;
    rtt_avg_ms: number | null;
    rtt_max_ms: number | null;
  }[];
}

/** One line per origin (the pool's own named "Pool"): healthy share and average RTT; undefined when empty. */
export function healthSeries(
  history: HealthHistory,
  nowSeconds: number,
):
  | {
      span: [number, number];
      times: number[];
      healthy: { label: string; values: (number | null)[] }[];
      rtt: { label: string; values: (number | null)[] }[];
    }
  | undefined {
  const times = [...new Set(history.points.map((p) => p.t))].sort((a, b) => a - b);
  if (times.length === 0) return undefined;
  const index = new Map(times.map((t, i) => [t, i]));
  const origins = [...new Set(history.points.map((p) => p.origin))].sort();
  const column = (origin: string, pick: (p: HealthHistory['points'][number]) => number | null) => {
    const values = new Array<number | null>(times.length).fill(null);
    for (const point of history.points) if (point.origin === origin) values[index.get(point.t)!] = pick(point);
    return values;
  };
  return {
    span: [nowSeconds - RANGE_SECONDS[history.range], nowSeconds],
    times,
    healthy: origins.map((origin) => ({
      label: origin === '' ? 'Pool' : origin,
      values: column(origin, (p) => p.healthy),
    })),
    rtt: origins
      .filter((origin) => origin !== '')
      .map((origin) => ({ label: origin, values: column(origin, (p) => p.rtt_avg_ms) })),
  };
}

/** A script's requests per step (`…/requests/history`), by status class, with its exceptions. */
export interface RequestHistory {
  range: TimeRange;
  step_seconds: number;
  points: {
    t: number;
    requests: number;
    exceptions: number;
    status: Record<'1xx' | '2xx' | '3xx' | '4xx' | '5xx', number>;
  }[];
}

export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

/**
 * Every step of the range up to `nowSeconds` (steps without traffic are zero): one column per status class and
 * one of exceptions, and the period's totals in a sentence (the chart is a picture; the figures are text too).
 */
export function requestSeries(
  history: RequestHistory,
  nowSeconds: number,
): { span: [number, number]; xs: number[]; columns: number[][]; exceptions: number[]; per: string; summary: string } {
  const step = history.step_seconds;
  const start = Math.floor((nowSeconds - RANGE_SECONDS[history.range]) / step) * step;
  const slots = Math.floor((nowSeconds - start) / step) + 1;
  const columns = STATUS_CLASSES.map(() => new Array<number>(slots).fill(0));
  const exceptions = new Array<number>(slots).fill(0);
  const totals = { requests: 0, exceptions: 0, '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  for (const point of history.points) {
    totals.requests += point.requests;
    totals.exceptions += point.exceptions;
    for (const cls of ['1xx', ...STATUS_CLASSES] as const) totals[cls] += point.status[cls];
    const slot = Math.floor((point.t - start) / step);
    if (slot < 0 || slot >= slots) continue;
    STATUS_CLASSES.forEach((cls, i) => (columns[i]![slot]! += point.status[cls]));
    exceptions[slot]! += point.exceptions;
  }
  const per = step === 60 ? 'minute' : step === 300 ? '5 minutes' : 'hour';
  return {
    span: [start, nowSeconds],
    xs: Array.from({ length: slots }, (_, i) => start + i * step),
    columns,
    exceptions,
    per,
    summary:
      `${totals.requests} requests in the period (2xx ${totals['2xx']}, 3xx ${totals['3xx']}, 4xx ${totals['4xx']}, ` +
      `5xx ${totals['5xx']}), ${totals.exceptions} exceptions; one point per ${per}.`,
  };
}
