import type {
  AssetSummary,
  CronRun,
  CronSchedule,
  Deployment,
  Script,
  ScriptBinding,
  ScriptSubdomain,
  SecretSummary,
} from '../../../client/index.ts';
import { formatBytes, formatTime, h, table } from '../dom.ts';
import { href } from '../router.ts';
import { pageView, writeButton } from '../ui-kit.ts';

/** "Workers & Pages": the account's scripts drawn from their list; workers.ts loads it. */
export function renderScripts(list: Script[]): HTMLElement {
  return pageView(
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
  );
}

/** What one script's page shows, as loaded by workers.ts (a part that could not be read is empty). */
export interface ScriptPage {
  script: string;
  deployments: Deployment[];
  bindings: ScriptBinding[];
  secrets: SecretSummary[];
  schedules: CronSchedule[];
  runs: CronRun[];
  assets: AssetSummary | null;
  route: Partial<ScriptSubdomain>;
}

/**
 * One script: route, deployments, assets, bindings, secret names, Cron Triggers with recent runs. The parts with
 * their own life (the request chart, the status line of "Run now", the live log) are given as elements.
 */
export function renderScriptDetail(
  page: ScriptPage,
  parts: { requests: HTMLElement; status: HTMLElement; logs: HTMLElement },
  actions: { runCron(cron: string): void },
): HTMLElement {
  const { route, assets } = page;
  return pageView(
    `Worker ${page.script}`,
    h('p', null, h('a', { href: href('workers') }, '← Workers & Pages')),
    route.url
      ? h('p', null, 'Served at ', h('a', { href: route.url, target: '_blank', rel: 'noopener' }, route.url))
      : h('p', null, 'Not routed on workers.dev.'),
    h('h2', null, 'Requests'),
    parts.requests,
    h('h2', null, 'Deployments'),
    table(
      'Deployments',
      ['Created', 'Versions', 'Source', 'Author'],
      page.deployments.map((d) => [
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
      page.bindings.map((b) => [b.name, b.type, bindingTarget(b)]),
      'No bindings.',
      true,
    ),
    h('h2', null, 'Secrets'),
    table(
      'Secret names (values are never shown)',
      ['Name', 'Type'],
      page.secrets.map((s) => [s.name ?? '', s.type ?? '']),
      'No secrets.',
    ),
    h('h2', null, 'Cron Triggers'),
    table(
      'Schedules',
      ['Cron', 'Actions'],
      page.schedules.map((s) => [h('code', null, s.cron), writeButton('Run now', () => actions.runCron(s.cron))]),
    ),
    parts.status,
    table(
      'Recent runs',
      ['Cron', 'Started', 'Outcome', 'Duration', 'Error'],
      page.runs
        .slice(0, 20)
        .map((r) => [
          r.cron,
          formatTime(r.started_on ?? r.scheduled_time),
          r.status,
          r.duration_ms === null ? '' : `${r.duration_ms} ms`,
          r.error ?? '',
        ]),
    ),
    h('h2', null, 'Logs'),
    parts.logs,
  );
}

/** What a binding points at: a bucket's name, a plain text's value; nothing for the other kinds. */
function bindingTarget(binding: ScriptBinding): string {
  if (binding.type === 'r2_bucket') return binding.bucket_name;
  if (binding.type === 'plain_text') return binding.text;
  return '';
}

export function assetConfigText(config: AssetSummary['config']): string {
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
