import uPlot from 'uplot';
import { page } from '../api.ts';
import { h, replace } from '../dom.ts';

/** Loaded on first use (its own chunk): uPlot is most of the dashboard's script. */
function chart(
  box: HTMLElement,
  title: string,
  series: { label: string; stroke: string; bars?: boolean }[],
  data: uPlot.AlignedData,
  yLabel: string,
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
  };
  replace(box);
  new uPlot(opts, data, box);
}

/** Alert deliveries per hour by outcome, from the history (last 7 days, up to 10,000 attempts). */
export async function deliveriesChart(box: HTMLElement, base: string, since: string): Promise<void> {
  const hour = 3600;
  const start = Math.floor(Date.parse(since) / 1000 / hour) * hour;
  const end = Math.floor(Date.now() / 1000 / hour) * hour;
  const slots = Math.max(1, (end - start) / hour + 1);
  const delivered = new Array<number>(slots).fill(0);
  const failed = new Array<number>(slots).fill(0);
  for (let p = 1; p <= 10; p++) {
    const result = await page<{ sent: string; status: string }>(`${base}/history`, p, 1000, { since });
    for (const item of result.items) {
      const slot = Math.floor((Date.parse(item.sent) / 1000 - start) / hour);
      if (slot < 0 || slot >= slots) continue;
      if (item.status === 'delivered') delivered[slot]!++;
      else if (item.status === 'failed' || item.status === 'retrying') failed[slot]!++;
    }
    if (p >= result.totalPages) break;
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
