import { enc, get, post } from '../api.ts';
import { button, checkbox, field, formatBytes, formatTime, h, replace, table, uid } from '../dom.ts';
import { href } from '../router.ts';
import { acct } from '../state.ts';
import { errorText, notice, pageView, writeButton } from '../ui-kit.ts';

interface Script {
  id: string;
  created_on: string;
  modified_on: string;
}
interface Deployment {
  id: string;
  created_on: string;
  source?: string;
  strategy?: string;
  author_email?: string;
  versions: { version_id: string; percentage: number }[];
}
interface Binding {
  type: string;
  name: string;
  bucket_name?: string;
  text?: string;
}
interface Run {
  cron: string;
  scheduled_time?: string;
  started_at?: string;
  outcome?: string;
  duration_ms?: number;
  error?: string | null;
}

const scriptsPath = () => `${acct()}/workers/scripts`;

/** "Workers & Pages": the account's scripts. */
export async function scripts(main: HTMLElement): Promise<void> {
  const list = await get<Script[]>(scriptsPath());
  replace(
    main,
    pageView(
      'Workers & Pages',
      h('p', null, 'Deploy with ', h('code', null, 'wrangler deploy'), ' or ', h('code', null, 'ledge deploy'), '.'),
      table(
        `Scripts (${list.length})`,
        ['Script', 'Created', 'Modified'],
        list.map((s) => [
          h('a', { href: href('workers', s.id) }, s.id),
          formatTime(s.created_on),
          formatTime(s.modified_on),
        ]),
      ),
    ),
  );
}

/** One script: deployments, bindings, secret names, Cron Triggers with recent runs, and its logs live. */
export async function scriptDetail(main: HTMLElement, script: string): Promise<void> {
  const base = `${scriptsPath()}/${enc(script)}`;
  const [deployments, settings, secrets, schedules, runs, assets, route] = await Promise.all([
    get<{ deployments: Deployment[] }>(`${base}/deployments`).catch(() => ({ deployments: [] })),
    get<{ bindings?: Binding[]; compatibility_date?: string }>(`${base}/settings`).catch(() => ({
      bindings: [] as Binding[],
    })),
    get<{ name: string; type: string }[]>(`${base}/secrets`).catch(() => []),
    get<{ schedules: { cron: string }[] }>(`${base}/schedules`).catch(() => ({ schedules: [] })),
    get<Run[]>(`${base}/schedules/runs`).catch(() => [] as Run[]),
    get<AssetSummary | null>(`${base}/assets`).catch(() => null),
    get<{ enabled: boolean; url?: string }>(`${base}/subdomain`).catch(() => ({ enabled: false }) as { url?: string }),
  ]);
  const status = notice();
  // The chart (uPlot, its own chunk) fills in when it has loaded; the rest of the page does not wait for it.
  const requestsBox = h('div', { class: 'requests' }, 'Loading the request chart…');
  void import('./charts.ts')
    .then((charts) => charts.requestsChart(requestsBox, base, script))
    .catch((error: unknown) => replace(requestsBox, `The request chart could not be loaded: ${errorText(error)}`));
  replace(
    main,
    pageView(
      `Worker ${script}`,
      h('p', null, h('a', { href: href('workers') }, '← Workers & Pages')),
      route.url
        ? h('p', null, 'Served at ', h('a', { href: route.url, target: '_blank', rel: 'noopener' }, route.url))
        : h('p', null, 'Not routed on workers.dev.'),
      h('h2', null, 'Requests'),
      requestsBox,
      h('h2', null, 'Deployments'),
      table(
        'Deployments',
        ['Created', 'Versions', 'Source', 'Author'],
        deployments.deployments.map((d) => [
          formatTime(d.created_on),
          d.versions.map((v) => `${v.version_id.slice(0, 8)} (${v.percentage}%)`).join(', '),
          d.source ?? '',
          d.author_email ?? '',
        ]),
        'No deployments yet.',
        true,
      ),
      h('h2', null, 'Static assets'),
      assets
        ? table(
            'Static assets of the current version',
            ['Files', 'Total size', 'Binding', 'Serving'],
            [
              [
                String(assets.files),
                formatBytes(assets.total_bytes),
                assets.binding ?? '—',
                assetConfigText(assets.config),
              ],
            ],
          )
        : h('p', null, 'The current version has no static assets.'),
      h('h2', null, 'Bindings'),
      table(
        'Bindings',
        ['Name', 'Type', 'Target'],
        (settings.bindings ?? []).map((b) => [
          b.name,
          b.type,
          b.bucket_name ?? (b.type === 'plain_text' ? (b.text ?? '') : ''),
        ]),
        'No bindings.',
        true,
      ),
      h('h2', null, 'Secrets'),
      table(
        'Secret names (values are never shown)',
        ['Name', 'Type'],
        secrets.map((s) => [s.name, s.type]),
        'No secrets.',
      ),
      h('h2', null, 'Cron Triggers'),
      table(
        'Schedules',
        ['Cron', 'Actions'],
        schedules.schedules.map((s) => [
          h('code', null, s.cron),
          writeButton('Run now', () => {
            post(`${base}/schedules/trigger`, { cron: s.cron }).then(
              () => status.ok(`Ran ${s.cron}.`),
              (error: unknown) => status.fail(error),
            );
          }),
        ]),
      ),
      status.element,
      table(
        'Recent runs',
        ['Cron', 'Started', 'Outcome', 'Duration', 'Error'],
        runs
          .slice(0, 20)
          .map((r) => [
            r.cron,
            formatTime(r.started_at ?? r.scheduled_time),
            r.outcome ?? '',
            r.duration_ms === undefined ? '' : `${r.duration_ms} ms`,
            r.error ?? '',
          ]),
      ),
      h('h2', null, 'Logs'),
      await logView(base),
    ),
  );
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

interface AssetSummary {
  files: number;
  total_bytes: number;
  binding: string | null;
  config: {
    html_handling?: string;
    not_found_handling?: string;
    run_worker_first?: boolean | string[];
    has_headers: boolean;
    has_redirects: boolean;
  };
}

function assetConfigText(config: AssetSummary['config']): string {
  const parts = [
    `html_handling: ${config.html_handling ?? 'auto-trailing-slash'}`,
    `not_found_handling: ${config.not_found_handling ?? 'none'}`,
  ];
  if (config.run_worker_first !== undefined)
    parts.push(
      `run_worker_first: ${Array.isArray(config.run_worker_first) ? config.run_worker_first.join(' ') : String(config.run_worker_first)}`,
    );
  if (config.has_headers) parts.push('_headers');
  if (config.has_redirects) parts.push('_redirects');
  return parts.join(', ');
}
