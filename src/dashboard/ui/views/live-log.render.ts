import { button, checkbox, field, formatTime, h, replace, uid } from '../dom.ts';

/** A script's log section drawn and filtered; workers.ts connects the tail session and loads the history. */

/** One event of a tail session, as `wrangler tail` receives it (trace-v1 JSON). */
export interface TailEvent {
  outcome?: string;
  eventTimestamp?: number;
  event?: { request?: { url?: string; method?: string }; response?: { status?: number } } | null;
  logs?: { level: string; message: unknown[]; timestamp: number }[];
  exceptions?: { name: string; message: string }[];
}

/** One kept console line of the script's log history (`GET …/tail?history=N&follow=false`). */
export interface HistoryLine {
  time: string;
  level: string;
  message: string[];
}

/** What the filters let through: the checked status classes, one method (or any), a text to contain. */
export interface LogFilters {
  statusClasses: string[];
  method: string;
  text: string;
}

export const LIVE_LOG_LIMIT = 500;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];
const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'];

/** An event as text: the request and its answer, then its console lines and exceptions, indented. */
export function tailEventText(event: TailEvent): string {
  const request = event.event?.request;
  const head = request
    ? `${request.method ?? ''} ${request.url ?? ''} → ${event.event?.response?.status ?? event.outcome ?? ''}`
    : (event.outcome ?? 'event');
  return [
    head,
    ...(event.logs ?? []).map(
      (l) => `  [${l.level}] ${l.message.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join(' ')}`,
    ),
    ...(event.exceptions ?? []).map((e) => `  ${e.name}: ${e.message}`),
  ].join('\n');
}

/** Whether an event passes the filters (an event without an answer, a cron run, has no status to filter). */
export function tailEventMatches(event: TailEvent, text: string, filters: LogFilters): boolean {
  const status = event.event?.response?.status;
  if (status !== undefined && !filters.statusClasses.some((cls) => cls[0] === String(status)[0])) return false;
  if (filters.method && event.event?.request?.method !== filters.method) return false;
  return !filters.text || text.toLowerCase().includes(filters.text.toLowerCase());
}

/** One line of the live log: its time (the event's, else `now`) and its text, kept as text. */
export function renderTailEvent(event: TailEvent, text: string, now: number): HTMLLIElement {
  return h(
    'li',
    null,
    h('time', null, new Date(event.eventTimestamp ?? now).toLocaleTimeString()),
    ' ',
    h('pre', null, text),
  );
}

/** The kept history, newest first. */
export function renderHistoryLines(lines: HistoryLine[]): HTMLLIElement[] {
  return [...lines]
    .reverse()
    .map((l) => h('li', null, h('time', null, formatTime(l.time)), ` [${l.level}] `, l.message.join(' ')));
}

/** The log section's parts that the live session and the history fill in. */
export interface LogView {
  view: HTMLElement;
  /** The filters as the user set them now. */
  filters(): LogFilters;
  /** Puts an event that passes the filters at the top, keeping the newest LIVE_LOG_LIMIT. */
  show(event: TailEvent, now: number): void;
  showHistory(lines: HistoryLine[]): void;
  /** Whether the live session is connected: the status line and the button's label follow. */
  setLive(live: boolean): void;
  setStatus(text: string): void;
}

/**
 * The live log (a tail session, the same one `wrangler tail` opens) with filters by status class, method and
 * text, and the kept history of console lines.
 */
export function renderLogView(actions: { toggleLive(): void; loadHistory(): void }): LogView {
  const out = h('ol', { class: 'log', 'aria-label': 'Live log', 'aria-live': 'off' });
  const historyList = h('ol', { class: 'log', 'aria-label': 'Log history' });
  const text = field('Text contains', { type: 'search' });
  const methodId = uid();
  const method = h(
    'select',
    { id: methodId },
    ['', ...METHODS].map((m) => h('option', { value: m }, m || 'Any method')),
  );
  const statusBoxes = STATUS_CLASSES.map((cls) => ({ cls, box: checkbox(cls, true) }));
  const status = h('p', { role: 'status' }, 'Not connected.');
  const connect = button('Start live log', () => actions.toggleLive());
  const filters = (): LogFilters => ({
    statusClasses: statusBoxes.filter((s) => s.box.input.checked).map((s) => s.cls),
    method: method.value,
    text: text.input.value,
  });
  const view = h(
    'section',
    { class: 'logs' },
    h(
      'div',
      { class: 'filters' },
      text.row,
      h('div', { class: 'field' }, h('label', { for: methodId }, 'Method'), method),
      h(
        'fieldset',
        null,
        h('legend', null, 'Status'),
        statusBoxes.map((s) => s.box.row),
      ),
    ),
    h(
      'div',
      { class: 'actions' },
      connect,
      button('Load history', () => actions.loadHistory()),
    ),
    status,
    out,
    h('h3', null, 'History'),
    historyList,
  );
  return {
    view,
    filters,
    show(event, now) {
      const joined = tailEventText(event);
      if (!tailEventMatches(event, joined, filters())) return;
      out.prepend(renderTailEvent(event, joined, now));
      while (out.children.length > LIVE_LOG_LIMIT) out.lastElementChild?.remove();
    },
    showHistory: (lines) => replace(historyList, renderHistoryLines(lines)),
    setLive(live) {
      replace(status, live ? 'Live: new requests appear at the top.' : 'Not connected.');
      replace(connect, live ? 'Stop live log' : 'Start live log');
    },
    setStatus: (message) => replace(status, message),
  };
}
