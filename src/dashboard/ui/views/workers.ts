import {
  getSchedules,
  getScriptAssets,
  getScriptSettings,
  getScriptSubdomain,
  listCronRuns,
  listDeployments,
  listScripts,
  listSecrets,
  triggerCron,
} from '../../../client/index.ts';
import { client, enc, post } from '../api.ts';
import { button, checkbox, field, formatTime, h, replace, uid } from '../dom.ts';
import { acct, state } from '../state.ts';
import { errorText, notice } from '../ui-kit.ts';
import { renderScriptDetail, renderScripts, type ScriptPage } from './workers.render.ts';

const scriptsPath = () => `${acct()}/workers/scripts`;

/** "Workers & Pages": the account's scripts, loaded through the client; workers.render.ts draws the page. */
export async function scripts(main: HTMLElement): Promise<void> {
  replace(main, renderScripts(await listScripts(client, state.accountId)));
}

/** One script's page: its parts loaded through the client (one that fails is shown empty), then drawn. */
async function loadScriptPage(script: string): Promise<ScriptPage> {
  const id = state.accountId;
  const [deployments, settings, secrets, schedules, runs, assets, route] = await Promise.all([
    listDeployments(client, id, script).catch(() => []),
    getScriptSettings(client, id, script).catch(() => ({ bindings: [] })),
    listSecrets(client, id, script).catch(() => []),
    getSchedules(client, id, script).catch(() => []),
    listCronRuns(client, id, script).catch(() => []),
    getScriptAssets(client, id, script).catch(() => null),
    getScriptSubdomain(client, id, script).catch(() => ({ enabled: false })),
  ]);
  return { script, deployments, bindings: settings.bindings ?? [], secrets, schedules, runs, assets, route };
}

/** One script: deployments, bindings, secret names, Cron Triggers with recent runs, and its logs live. */
export async function scriptDetail(main: HTMLElement, script: string): Promise<void> {
  const base = `${scriptsPath()}/${enc(script)}`;
  const page = await loadScriptPage(script);
  const status = notice();
  // The chart (uPlot, its own chunk) fills in when it has loaded; the rest of the page does not wait for it.
  const requests = h('div', { class: 'requests' }, 'Loading the request chart…');
  void import('./charts.ts')
    .then((charts) => charts.requestsChart(requests, base, script))
    .catch((error: unknown) => replace(requests, `The request chart could not be loaded: ${errorText(error)}`));
  const runCron = (cron: string) => {
    triggerCron(client, state.accountId, script, cron).then(
      () => status.ok(`Ran ${cron}.`),
      (error: unknown) => status.fail(error),
    );
  };
  replace(main, renderScriptDetail(page, { requests, status: status.element, logs: await logView(base) }, { runCron }));
}

interface TailEvent {
  outcome?: string;
  eventTimestamp?: number;
  event?: { request?: { url?: string; method?: string }; response?: { status?: number } } | null;
  logs?: { level: string; message: unknown[]; timestamp: number }[];
  exceptions?: { name: string; message: string }[];
}

/**
 * The live stream (a tail session, the same one `wrangler tail` opens, over its WebSocket) with filters by
 * status class, method and text, and the kept history of console lines.
 */
async function logView(base: string): Promise<HTMLElement> {
  const out = h('ol', { class: 'log', 'aria-label': 'Live log', 'aria-live': 'off' });
  const historyList = h('ol', { class: 'log', 'aria-label': 'Log history' });
  const text = field('Text contains', { type: 'search' });
  const methodId = uid();
  const method = h(
    'select',
    { id: methodId },
    ['', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'].map((m) => h('option', { value: m }, m || 'Any method')),
  );
  const statusBoxes = ['2xx', '3xx', '4xx', '5xx'].map((cls) => ({ cls, box: checkbox(cls, true) }));
  const state = h('p', { role: 'status' }, 'Not connected.');
  let socket: WebSocket | undefined;
  const matches = (event: TailEvent, line: string) => {
    const status = event.event?.response?.status;
    if (status !== undefined && !statusBoxes.some((s) => s.box.input.checked && s.cls[0] === String(status)[0]))
      return false;
    if (method.value && event.event?.request?.method !== method.value) return false;
    return !text.input.value || line.toLowerCase().includes(text.input.value.toLowerCase());
  };
  const show = (event: TailEvent) => {
    const request = event.event?.request;
    const head = request
      ? `${request.method ?? ''} ${request.url ?? ''} → ${event.event?.response?.status ?? event.outcome ?? ''}`
      : (event.outcome ?? 'event');
    const lines = [
      head,
      ...(event.logs ?? []).map(
        (l) => `  [${l.level}] ${l.message.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join(' ')}`,
      ),
      ...(event.exceptions ?? []).map((e) => `  ${e.name}: ${e.message}`),
    ];
    const joined = lines.join('\n');
    if (!matches(event, joined)) return;
    out.prepend(
      h(
        'li',
        null,
        h('time', null, new Date(event.eventTimestamp ?? Date.now()).toLocaleTimeString()),
        ' ',
        h('pre', null, joined),
      ),
    );
    while (out.children.length > 500) out.lastElementChild?.remove();
  };
  const connect = button('Start live log', async () => {
    if (socket) {
      socket.close();
      return;
    }
    try {
      const session = await post<{ id: string; url: string }>(`${base}/tails`, { filters: [] });
      socket = new WebSocket(session.url, 'trace-v1');
      socket.binaryType = 'arraybuffer';
      socket.onopen = () => {
        replace(state, 'Live: new requests appear at the top.');
        replace(connect, 'Stop live log');
      };
      socket.onmessage = (message) => {
        const data =
          typeof message.data === 'string' ? message.data : new TextDecoder().decode(message.data as ArrayBuffer);
        try {
          show(JSON.parse(data) as TailEvent);
        } catch {
          // not an event
        }
      };
      socket.onclose = () => {
        socket = undefined;
        replace(state, 'Not connected.');
        replace(connect, 'Start live log');
      };
    } catch (error) {
      replace(state, errorText(error));
    }
  });
  const loadHistory = button('Load history', async () => {
    const response = await fetch(`/client/v4${base}/tail?history=200&follow=false`);
    const lines = (await response.text())
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { time: string; level: string; message: string[] });
    replace(
      historyList,
      lines
        .reverse()
        .map((l) => h('li', null, h('time', null, formatTime(l.time)), ` [${l.level}] `, l.message.join(' '))),
    );
  });
  return h(
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
    h('div', { class: 'actions' }, connect, loadHistory),
    state,
    out,
    h('h3', null, 'History'),
    historyList,
  );
}
