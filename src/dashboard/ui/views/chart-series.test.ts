// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { deliverySeries, healthSeries, requestSeries, type RequestHistory } from './chart-series.ts';
import { renderPoolChartsPage } from './pool-charts.render.ts';

const at = (iso: string) => Date.parse(iso);
const seconds = (iso: string) => at(iso) / 1000;
const status = (fields: Partial<RequestHistory['points'][number]['status']> = {}) => ({
  '1xx': 0,
  '2xx': 0,
  '3xx': 0,
  '4xx': 0,
  '5xx': 0,
  ...fields,
});

describe('the charts, shaped from their figures', () => {
  it('draws one bar per hour of the period, empty hours zero, and says the totals', () => {
    const series = deliverySeries(
      [
        { hour: '2026-01-01T10:00:00Z', delivered: 2, failed: 1 },
        { hour: '2026-01-01T12:00:00Z', delivered: 5, failed: 0 },
        { hour: '2025-12-31T00:00:00Z', delivered: 9, failed: 9 }, // before the period: not drawn
      ],
      '2026-01-01T10:20:00Z',
      at('2026-01-01T12:59:00Z'),
    );
    expect(series.xs).toEqual([
      seconds('2026-01-01T10:00:00Z'),
      seconds('2026-01-01T11:00:00Z'),
      seconds('2026-01-01T12:00:00Z'),
    ]);
    expect(series.delivered).toEqual([2, 0, 5]);
    expect(series.failed).toEqual([1, 0, 0]);
    expect(series.summary).toBe('7 delivered and 1 failed attempts in the period.');
  });

  it("draws a pool's health per origin (the pool's own line named Pool) and RTT for origins only", () => {
    const now = seconds('2026-01-01T12:00:00Z');
    const point = (t: number, origin: string, healthy: number, rtt: number | null) => ({
      t,
      origin,
      checks: 4,
      healthy,
      rtt_avg_ms: rtt,
      rtt_max_ms: rtt,
    });
    const series = healthSeries(
      {
        range: 'hour',
        step_seconds: 60,
        points: [point(now - 120, '', 1, null), point(now - 60, '', 0.5, null), point(now - 60, 'b.example', 0, 12)],
      },
      now,
    )!;
    expect(series.span).toEqual([now - 3600, now]);
    expect(series.times).toEqual([now - 120, now - 60]);
    expect(series.healthy).toEqual([
      { label: 'Pool', values: [1, 0.5] },
      { label: 'b.example', values: [null, 0] },
    ]);
    expect(series.rtt).toEqual([{ label: 'b.example', values: [null, 12] }]);
    expect(healthSeries({ range: 'day', step_seconds: 300, points: [] }, now)).toBeUndefined();
  });

  it("draws a script's requests per step by status class, steps without traffic zero, and totals as text", () => {
    const now = seconds('2026-01-01T12:00:30Z');
    const series = requestSeries(
      {
        range: 'hour',
        step_seconds: 60,
        points: [
          { t: now - 30 - 120, requests: 3, exceptions: 1, status: status({ '2xx': 2, '5xx': 1 }) },
          { t: now - 30, requests: 1, exceptions: 0, status: status({ '4xx': 1 }) },
        ],
      },
      now,
    );
    expect(series.xs.length).toBe(61);
    expect(series.xs.at(-1)).toBe(now - 30);
    expect(series.columns.map((column) => column.slice(-3))).toEqual([
      [2, 0, 0],
      [0, 0, 0],
      [0, 0, 1],
      [1, 0, 0],
    ]);
    expect(series.exceptions.slice(-3)).toEqual([1, 0, 0]);
    expect(series.summary).toBe(
      '4 requests in the period (2xx 2, 3xx 0, 4xx 1, 5xx 1), 1 exceptions; one point per minute.',
    );
  });

  it("frames a pool's health page: its name as text, the way back, the step", () => {
    const picker = document.createElement('div');
    const markup = '<img src=x onerror=alert(1)>';
    const { view, healthBox, rttBox } = renderPoolChartsPage({ id: 'p1', name: markup }, 300, picker);
    expect(view.querySelector('h1')?.textContent).toBe(`Health of ${markup}`);
    expect(view.querySelector('img')).toBeNull();
    expect(view.querySelector('a')?.getAttribute('href')).toMatch(/lb\/pools\/p1$/);
    expect(view.textContent).toContain('One point per 5 minute(s).');
    expect(healthBox.getAttribute('aria-label')).toBe(`Health of ${markup} and its origins`);
    expect(view.contains(healthBox) && view.contains(rttBox)).toBe(true);
  });
});
