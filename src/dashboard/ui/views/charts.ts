import uPlot from 'uplot';
import { enc, get } from '../api.ts';
import { h, replace } from '../dom.ts';
import { onHealth } from '../live.ts';
import { go, href } from '../router.ts';
import { acct } from '../state.ts';
import { rangePicker } from '../ui-kit.ts';
import {
  deliverySeries,
  healthSeries,
  requestSeries,
  STATUS_CLASSES,
  type HealthHistory,
  type HourlyDeliveries,
  type RequestHistory,
} from './chart-series.ts';
import { renderPoolChartsPage } from './pool-charts.render.ts';

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
  const counts = await get<HourlyDeliveries[]>(`${base}/history/hourly`, { since });
  const series = deliverySeries(counts, since, Date.now());
  chart(
    box,
    'Alert deliveries per hour',
    [
      { label: 'Delivered', stroke: '#1a7f37', bars: true },
      { label: 'Failed or retrying', stroke: '#cf222e', bars: true },
    ],
    [series.xs, series.delivered, series.failed],
    'attempts',
  );
  box.append(h('p', { class: 'sr-only' }, series.summary));
}

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
  const picker = rangePicker(range, (chosen) => go(`${href('lb', 'pools', poolId, 'charts')}?range=${chosen}`));
  const { view, healthBox, rttBox } = renderPoolChartsPage(
    { id: poolId, name: pool.name },
    history.step_seconds,
    picker.element,
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
  const series = healthSeries(history, Math.floor(Date.now() / 1000));
  if (!series) {
    replace(healthBox, 'No checks recorded in this period yet.');
    replace(rttBox);
    return;
  }
  const lines = (columns: { label: string; values: (number | null)[] }[]) =>
    [series.times, ...columns.map((c) => c.values)] as uPlot.AlignedData;
  chart(
    healthBox,
    'Healthy share of checks',
    series.healthy.map((c, i) => ({ label: c.label, stroke: PALETTE[i % PALETTE.length]! })),
    lines(series.healthy),
    'healthy (0-1)',
    { x: series.span, y: [0, 1] },
  );
  chart(
    rttBox,
    'Average round-trip time',
    series.rtt.map((c, i) => ({ label: c.label, stroke: PALETTE[(i + 1) % PALETTE.length]! })),
    lines(series.rtt),
    'ms',
    { x: series.span },
  );
}

const STROKES: Record<(typeof STATUS_CLASSES)[number], string> = {
  '2xx': '#1a7f37',
  '3xx': '#0b57d0',
  '4xx': '#bc4c00',
  '5xx': '#cf222e',
};

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
  const series = requestSeries(history, Math.floor(Date.now() / 1000));
  replace(summary, series.summary);
  chart(
    chartBox,
    `Requests per ${series.per} by status class`,
    [
      ...STATUS_CLASSES.map((cls) => ({ label: cls, stroke: STROKES[cls] })),
      { label: 'Exceptions', stroke: '#6e7781' },
    ],
    [series.xs, ...series.columns, series.exceptions] as uPlot.AlignedData,
    'requests',
    { x: series.span },
  );
}
