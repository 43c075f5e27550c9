// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import {
  LIVE_LOG_LIMIT,
  renderHistoryLines,
  renderLogView,
  tailEventMatches,
  tailEventText,
  type TailEvent,
} from './live-log.render.ts';
import { labelled } from './render-testing.ts';

const request = (method: string, status: number, fields: Partial<TailEvent> = {}): TailEvent => ({
  outcome: 'ok',
  eventTimestamp: Date.UTC(2026, 0, 1, 12),
  event: { request: { method, url: `https://hello.example.com/${method.toLowerCase()}` }, response: { status } },
  ...fields,
});
const liveLines = (view: HTMLElement) =>
  Array.from(view.querySelectorAll('ol[aria-label="Live log"] pre')).map((pre) => pre.textContent);
const check = (view: HTMLElement, name: string, checked: boolean) => {
  labelled(view, name).checked = checked;
};

describe('the live log, drawn and filtered', () => {
  it('writes an event as its request, answer, console lines and exceptions', () => {
    const text = tailEventText(
      request('POST', 500, {
        logs: [{ level: 'log', message: ['saved', { id: 7 }], timestamp: 0 }],
        exceptions: [{ name: 'TypeError', message: 'x is undefined' }],
      }),
    );
    expect(text).toBe('POST https://hello.example.com/post → 500\n  [log] saved {"id":7}\n  TypeError: x is undefined');
    expect(tailEventText({ outcome: 'ok', event: null })).toBe('ok');
  });

  it('filters by status class, method and text; an event without a status passes the status filter', () => {
    const all = { statusClasses: ['2xx', '3xx', '4xx', '5xx'], method: '', text: '' };
    const get = request('GET', 404);
    expect(tailEventMatches(get, tailEventText(get), all)).toBe(true);
    expect(tailEventMatches(get, tailEventText(get), { ...all, statusClasses: ['2xx', '5xx'] })).toBe(false);
    expect(tailEventMatches(get, tailEventText(get), { ...all, method: 'POST' })).toBe(false);
    expect(tailEventMatches(get, tailEventText(get), { ...all, text: 'HELLO.example' })).toBe(true);
    expect(tailEventMatches(get, tailEventText(get), { ...all, text: 'nowhere' })).toBe(false);
    const cron: TailEvent = { outcome: 'ok', event: null };
    expect(tailEventMatches(cron, 'ok', { ...all, statusClasses: [] })).toBe(true);
  });

  it('shows the events that pass the filters set on the page, newest first, as text', () => {
    const log = renderLogView({ toggleLive: () => {}, loadHistory: () => {} });
    document.body.replaceChildren(log.view);
    check(log.view, '4xx', false);
    labelled<HTMLSelectElement>(log.view, 'Method').value = 'GET';
    log.show(request('GET', 200), 0);
    log.show(request('GET', 404), 0);
    log.show(request('POST', 200), 0);
    log.show(
      request('GET', 201, { logs: [{ level: 'warn', message: ['<img src=x onerror=alert(1)>'], timestamp: 0 }] }),
      0,
    );
    expect(liveLines(log.view)).toEqual([
      'GET https://hello.example.com/get → 201\n  [warn] <img src=x onerror=alert(1)>',
      'GET https://hello.example.com/get → 200',
    ]);
    expect(log.view.querySelector('img')).toBeNull();
    labelled(log.view, 'Text contains').value = '201';
    expect(log.filters()).toEqual({ statusClasses: ['2xx', '3xx', '5xx'], method: 'GET', text: '201' });
  });

  it(`keeps the newest ${LIVE_LOG_LIMIT} events`, () => {
    const log = renderLogView({ toggleLive: () => {}, loadHistory: () => {} });
    for (let i = 0; i < LIVE_LOG_LIMIT + 3; i++) log.show({ outcome: `event ${i}` }, 0);
    const lines = liveLines(log.view);
    expect(lines.length).toBe(LIVE_LOG_LIMIT);
    expect(lines[0]).toBe(`event ${LIVE_LOG_LIMIT + 2}`);
    expect(lines.at(-1)).toBe('event 3');
  });

  it('says whether it is live, and its buttons call their actions', () => {
    const toggleLive = vi.fn();
    const loadHistory = vi.fn();
    const log = renderLogView({ toggleLive, loadHistory });
    const buttonNamed = (name: string) =>
      Array.from(log.view.querySelectorAll('button')).find((b) => b.textContent === name);
    expect(log.view.querySelector('[role="status"]')?.textContent).toBe('Not connected.');
    buttonNamed('Start live log')!.click();
    expect(toggleLive).toHaveBeenCalledOnce();
    log.setLive(true);
    expect(log.view.querySelector('[role="status"]')?.textContent).toBe('Live: new requests appear at the top.');
    expect(buttonNamed('Stop live log')).toBeDefined();
    log.setLive(false);
    expect(buttonNamed('Start live log')).toBeDefined();
    buttonNamed('Load history')!.click();
    expect(loadHistory).toHaveBeenCalledOnce();
  });

  it('lists the kept history newest first', () => {
    const items = renderHistoryLines([
      { time: '2026-01-01T00:00:00Z', level: 'log', message: ['first'] },
      { time: '2026-01-01T00:00:01Z', level: 'error', message: ['second', 'line'] },
    ]);
    expect(items.map((li) => li.textContent?.replace(/^.*? \[/, '['))).toEqual(['[error] second line', '[log] first']);
  });
});
