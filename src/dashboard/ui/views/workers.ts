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
import { h, replace } from '../dom.ts';
import { acct, state } from '../state.ts';
import { errorText, notice } from '../ui-kit.ts';
import { renderLogView, type HistoryLine, type TailEvent } from './live-log.render.ts';
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
  replace(main, renderScriptDetail(page, { requests, status: status.element, logs: logView(base) }, { runCron }));
}

/** The live log's data: a tail session over its WebSocket, and the kept history; live-log.render.ts draws it. */
function logView(base: string): HTMLElement {
  let socket: WebSocket | undefined;
  const log = renderLogView({
    toggleLive: () => {
      if (socket) {
        socket.close();
        return;
      }
      void connect();
    },
    loadHistory: () => void loadHistory(),
  });
  const connect = async () => {
    try {
      const session = await post<{ id: string; url: string }>(`${base}/tails`, { filters: [] });
      socket = new WebSocket(session.url, 'trace-v1');
      socket.binaryType = 'arraybuffer';
      socket.onopen = () => log.setLive(true);
      socket.onmessage = (message) => {
        const data =
          typeof message.data === 'string' ? message.data : new TextDecoder().decode(message.data as ArrayBuffer);
        let event: TailEvent;
        try {
          event = JSON.parse(data) as TailEvent;
        } catch {
          return; // not an event
        }
        log.show(event, Date.now());
      };
      socket.onclose = () => {
        socket = undefined;
        log.setLive(false);
      };
    } catch (error) {
      log.setStatus(errorText(error));
    }
  };
  const loadHistory = async () => {
    const response = await fetch(`/client/v4${base}/tail?history=200&follow=false`);
    const lines = (await response.text())
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as HistoryLine);
    log.showHistory(lines);
  };
  return log.view;
}
