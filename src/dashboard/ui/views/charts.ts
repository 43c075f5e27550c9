import uPlot from 'uplot';
import { enc, get } from '../api.ts';
import { h, replace } from '../dom.ts';
import { onHealth } from '../live.ts';
import { go, href } from '../router.ts';
import { acct } from '../state.ts';
import { pageView, rangePicker } from '../ui-kit.ts';

/** Loaded on first use (its own chunk): uPlot is most of the dashboard's script. */
function chart(
  box: HTMLElement,
  title: string,
  series: { label: string; stroke: string; bars?: boolean }[],
  data: uPlot.AlignedData,
  yLabel: string,
  ranges: { x?: [number, number]; y?: [number, number] } = {},
): void {
  const width = Math.max(320, Math.min(box.clientWidth || 800, 1100));
  const opts: uPlot.Options = {
    title,
    width,
    height: 240,
    series: [
      {},
      ...series.map((s) => ({
        label: s.label,
        stroke: s.stroke,
        width: 2,
        ...(s.bars ? { paths: uPlot.paths.bars!({ size: [0.8, 40] }), fill: `${s.stroke}55` } : {}),
      })),
    ],
    axes: [{}, { label: yLabel }],
    // The whole window asked for, whatever part of it has data (a new pool has a few points at its end).
    scales: {
      x: { time: true, ...(ranges.x ? { range: ranges.x } : {}) },
      ...(ranges.y ? { y: { range: ranges.y } } : {}),
    },
  };
  replace(box);
  new uPlot(opts, data, box);
}

/** Alert deliveries per hour by outcome over the period (counted by the server: `history/hourly`). */
export async function deliveriesChart(box: HTMLElement, base: string, since: string): Promise<void> {
  const hour = 3600;
  const start = Math.floor(Date.parse(since) / 1000 / hour) * hour;
  const end = Math.floor(Date.now() / 1000 / hour) * hour;
  const slots = Math.max(1, (end - start) / hour + 1);
  const delivered = new Array<number>(slots).fill(0);
  const failed = new Array<number>(slots).fill(0);
  const counts = await get<{ hour: string; delivered: number; failed: number }[]>(`${base}/history/hourly`, { since });
  for (const count of counts) {
    const slot = Math.floor((Date.parse(count.hour) / 1000 - start) / hour);
    if (slot < 0 || slot >= slots) continue;
    delivered[slot]! += count.delivered;
    failed[slot]! += count.failed;
  }
  const xs = Array.from({ length: slots }, (_, i) => start + i * hour);
  chart(
    box,
    'Alert deliveries per hour',
    [
      { label: 'Delivered', stroke: '#1a7f37', bars: true },
      { label: 'Failed or retrying', stroke: '#cf222e', bars: true },
    ],
    [xs, delivered, failed],
    'attempts',
  );
  box.append(
    h(
      'p',
      { class: 'sr-only' },
      `${delivered.reduce((a, b) => a + b, 0)} delivered and ${failed.reduce((a, b) => a + b, 0)} failed attempts in the period.`,
    ),
  );
}

interface HealthHistory {
  range: 'hour' | 'day' | 'week';
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

const RANGE_SECONDS = { hour: 3600, day: 86_400, week: 604_800 } as const;
const PALETTE = ['#0b57d0', '#b42318', '#1a7f37', '#8250df', '#bc4c00', '#0a7d84', '#6e7781'];

/** A pool's health (healthy share of checks) and each origin's average RTT over the last hour, day or week. */
export async function poolCharts(
  main: HTMLElement,
  poolId: string,
  range: 'hour' | 'day' | 'week' = 'hour',
): Promise<void> {
  const base = `${acct()}/load_balancers/pools/${enc(poolId)}`;
  const [pool, history] = await Promise.all([
    get<{ name: string }>(base),
    get<HealthHistory>(`${base}/health/history`, { range }),
  ]);
  const healthBox = h('div', { class: 'chart', role: 'img', 'aria-label': `Health of ${pool.name} and its origins` });
  const rttBox = h('div', {
    class: 'chart',
    role: 'img',
    'aria-label': `Round-trip time of the origins of ${pool.name}`,
  });
  const picker = rangePicker(range, (chosen) => go(`${href('lb', 'pools', poolId, 'charts')}?range=${chosen}`));
  const view = pageView(
    `Health of ${pool.name}`,
    h('p', null, h('a', { href: href('lb', 'pools', poolId) }, '← Edit pool')),
    picker.element,
    h('p', null, `One point per ${history.step_seconds / 60} minute(s).`),
    healthBox,
    rttBox,
  );
  replace(main, view);
  draw(healthBox, rttBox, history);
  const refresh = () =>
    void get<HealthHistory>(`${base}/health/history`, { range }).then(
      (next) => draw(healthBox, rttBox, next),
      () => undefined,
    );
  onHealth(view, (change) => {
    if (change.pool_id === poolId) refresh();
  });
  const timer = setInterval(() => (view.isConnected ? refresh() : clearInterval(timer)), 30_000);
}

function draw(healthBox: HTMLElement, rttBox: HTMLElement, history: HealthHistory): void {
  const now = Math.floor(Date.now() / 1000);
  const span: [number, number] = [now - RANGE_SECONDS[history.range], now];
  const times = [...new Set(history.points.map((p) => p.t))].sort((a, b) => a - b);
  if (times.length === 0) {
    replace(healthBox, 'No checks recorded in this period yet.');
    replace(rttBox);
    return;
  }
  const index = new Map(times.map((t, i) => [t, i]));
  const origins = [...new Set(history.points.map((p) => p.origin))].sort();
  const column = (origin: string, pick: (p: HealthHistory['points'][number]) => number | null) => {
    const values: (number | null)[] = new Array<number | null>(times.length).fill(null);
    for (const point of history.points) if (point.origin === origin) values[index.get(point.t)!] = pick(point);
    return values;
  };
  const named = (origin: string) => (origin === '' ? 'Pool' : origin);
  chart(
    healthBox,
    'Healthy share of checks',
    origins.map((origin, i) => ({ label: named(origin), stroke: PALETTE[i % PALETTE.length]! })),
    [times, ...origins.map((origin) => column(origin, (p) => p.healthy))] as uPlot.AlignedData,
    'healthy (0-1)',
    { x: span, y: [0, 1] },
  );
  const withRtt = origins.filter((origin) => origin !== '');
  chart(
    rttBox,
    'Average round-trip time',
    withRtt.map((origin, i) => ({ label: origin, stroke: PALETTE[(i + 1) % PALETTE.length]! })),
    [times, ...withRtt.map((origin) => column(origin, (p) => p.rtt_avg_ms))] as uPlot.AlignedData,
    'ms',
    { x: span },
  );
}

interface RequestHistory {
  range: 'hour' | 'day' | 'week';
  step_seconds: number;
  points: {
    t: number;
    requests: number;
    exceptions: number;
    status: Record<'1xx' | '2xx' | '3xx' | '4xx' | '5xx', number>;
  }[];
}

const CLASSES = [
  { cls: '2xx', stroke: '#1a7f37' },
  { cls: '3xx', stroke: '#0b57d0' },
  { cls: '4xx', stroke: '#bc4c00' },
  { cls: '5xx', stroke: '#cf222e' },
] as const;

/**
 * A script's requests by status class (and its exceptions) per step over the last hour, day or week, with range
 * buttons; steps without traffic are drawn as zero. The figures are also given as text (the chart is a picture).
 */
export async function requestsChart(box: HTMLElement, scriptBase: string, script: string): Promise<void> {
  const chartBox = h('div', { class: 'chart', role: 'img', 'aria-label': `Requests of ${script} by status class` });
  const summary = h('p', { role: 'status', 'aria-label': 'Request totals' });
  const picker = rangePicker('hour', (range) => void show(range));
  let current: 'hour' | 'day' | 'week' = 'hour';
  const show = async (range: 'hour' | 'day' | 'week') => {
    current = range;
    picker.select(range);
    const history = await get<RequestHistory>(`${scriptBase}/requests/history`, { range });
    if (current === range) drawRequests(chartBox, summary, history);
  };
  replace(box, picker.element, summary, chartBox);
  await show('hour');
  const timer = setInterval(
    () => (box.isConnected ? void show(current).catch(() => undefined) : clearInterval(timer)),
    30_000,
  );
}

function drawRequests(chartBox: HTMLElement, summary: HTMLElement, history: RequestHistory): void {
  const step = history.step_seconds;
  const now = Math.floor(Date.now() / 1000);
  const start = Math.floor((now - RANGE_SECONDS[history.range]) / step) * step;
  const slots = Math.floor((now - start) / step) + 1;
  const xs = Array.from({ length: slots }, (_, i) => start + i * step);
  const columns = CLASSES.map(() => new Array<number>(slots).fill(0));
  const exceptions = new Array<number>(slots).fill(0);
  const totals = { requests: 0, exceptions: 0, '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  for (const point of history.points) {
    totals.requests += point.requests;
    totals.exceptions += point.exceptions;
    for (const cls of ['1xx', '2xx', '3xx', '4xx', '5xx'] as const) totals[cls] += point.status[cls];
    const slot = Math.floor((point.t - start) / step);
    if (slot < 0 || slot >= slots) continue;
    CLASSES.forEach(({ cls }, i) => (columns[i]![slot]! += point.status[cls]));
    exceptions[slot]! += point.exceptions;
  }
  const per = step === 60 ? 'minute' : step === 300 ? '5 minutes' : 'hour';
  replace(
    summary,
    `${totals.requests} requests in the period (2xx ${totals['2xx']}, 3xx ${totals['3xx']}, 4xx ${totals['4xx']}, ` +
      `5xx ${totals['5xx']}), ${totals.exceptions} exceptions; one point per ${per}.`,
  );
  chart(
    chartBox,
    `Requests per ${per} by status class`,
    [...CLASSES.map(({ cls, stroke }) => ({ label: cls, stroke })), { label: 'Exceptions', stroke: '#6e7781' }],
    [xs, ...columns, exceptions] as uPlot.AlignedData,
    'requests',
    { x: [start, now] },
  );
}
