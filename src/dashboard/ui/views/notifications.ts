import { csrf, del, enc, get, page, post, put } from '../api.ts';
import { checkbox, field, formatTime, h, replace, table } from '../dom.ts';
import { go, href } from '../router.ts';
import { acct, state } from '../state.ts';
import { confirmDialog, errorText, guardForm, notice, pageView, pager, writeButton } from '../ui-kit.ts';
import type { Pool } from '../../../client/index.ts';

export interface Policy {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
  alert_type: string;
  mechanisms: { email?: { id: string }[]; webhooks?: { id: string }[] };
  filters: Record<string, string[]>;
  created: string;
}
interface Webhook {
  id: string;
  name: string;
  url: string;
  type: string;
  last_success?: string | null;
  last_failure?: string | null;
}
interface HistoryItem {
  id: string;
  name: string;
  alert_type: string;
  mechanism: string;
  mechanism_type: string;
  sent: string;
  status: string;
  attempt: number;
  error: string | null;
  alert_body: string;
}

const base = () => `${acct()}/alerting/v3`;
export const HEALTH_ALERT = 'load_balancing_health_alert';

function tabs(current: string): HTMLElement {
  const link = (name: string, label: string) =>
    h(
      'a',
      {
        href: name ? href('notifications', name) : href('notifications'),
        'aria-current': current === name ? 'page' : undefined,
      },
      label,
    );
  return h(
    'nav',
    { class: 'tabs', 'aria-label': 'Notifications' },
    link('', 'Policies'),
    link('destinations', 'Destinations'),
    link('history', 'Alert history'),
    link('migration', 'Email migration'),
  );
}

/**
 * Sends a webhook Cloudflare's test message: what Cloudflare's API offers as a test is saving a webhook destination
 * (create or update sends a test message first and refuses the save, 17008, when the receiver does not accept it).
 * Re-saving with the same name and URL keeps the stored secret, so the test is signed as real alerts are.
 */
async function testWebhook(hook: Webhook): Promise<string> {
  try {
    await put(`${base()}/destinations/webhooks/${enc(hook.id)}`, { name: hook.name, url: hook.url });
    return `${hook.name}: test message accepted`;
  } catch (error) {
    return `${hook.name}: failed, ${errorText(error)}`;
  }
}

/**
 * A policy's "Test": a test message to each of its webhooks, and what happened. Email has no test in Cloudflare's
 * API (nor in Ledge's), so recipients are named as not tested rather than sent a made-up alert.
 */
async function testPolicy(policy: Policy, hooks: Webhook[]): Promise<{ text: string; failed: boolean }> {
  const ids = (policy.mechanisms.webhooks ?? []).map((m) => m.id);
  const outcomes = await Promise.all(
    ids.map((id) => {
      const hook = hooks.find((w) => w.id === id);
      return hook ? testWebhook(hook) : Promise.resolve(`webhook ${id}: failed, no such destination`);
    }),
  );
  const emails = (policy.mechanisms.email ?? []).length;
  if (emails > 0) outcomes.push(`${emails} email recipient(s): not tested (the API offers no test for email)`);
  if (outcomes.length === 0) outcomes.push('no destinations to test');
  return {
    text: `Test of "${policy.name}": ${outcomes.join('; ')}`,
    failed: outcomes.some((o) => o.includes(': failed')),
  };
}

/** Policies: list, edit, test, delete; "Create" opens the form. */
export async function policies(main: HTMLElement): Promise<void> {
  const [list, hooks] = await Promise.all([
    get<Policy[]>(`${base()}/policies`),
    get<Webhook[]>(`${base()}/destinations/webhooks`),
  ]);
  const status = notice();
  const rows = list.map((policy) => [
    h('span', { class: 'name' }, policy.name),
    policy.alert_type,
    policy.enabled ? 'Enabled' : 'Disabled',
    [
      ...(policy.mechanisms.email ?? []).map((m) => m.id),
      ...(policy.mechanisms.webhooks ?? []).map((m) => `webhook ${m.id.slice(0, 8)}`),
    ].join(', '),
    h(
      'span',
      { class: 'actions' },
      h('a', { href: href('notifications', 'policies', policy.id), class: 'button' }, 'Edit'),
      writeButton(
        'Test',
        (event) => {
          const button = event.currentTarget as HTMLButtonElement;
          button.disabled = true;
          status.ok(`Testing "${policy.name}"…`);
          void testPolicy(policy, hooks).then(({ text, failed }) => {
            button.disabled = false;
            if (failed) status.fail(new Error(text));
            else status.ok(text);
          });
        },
        { 'aria-label': `Test ${policy.name}` },
      ),
      writeButton('Delete', async () => {
        if (!(await confirmDialog(`Delete the notification "${policy.name}"?`, 'Delete'))) return;
        del(`${base()}/policies/${enc(policy.id)}`).then(
          () => void policies(main),
          (error: unknown) => status.fail(error),
        );
      }),
    ),
  ]);
  replace(
    main,
    pageView(
      'Notifications',
      tabs(''),
      h(
        'div',
        { class: 'actions' },
        h('a', { href: `${href('notifications', 'new')}?alert_type=${HEALTH_ALERT}`, class: 'button' }, 'Create'),
      ),
      status.element,
      table('Notification policies', ['Name', 'Alert type', 'State', 'Recipients', 'Actions'], rows),
    ),
  );
}

/**
 * The notification form, for a new policy (pre-filled from the query: the spec's "Create a Health Alert" passes
 * the pool) or an existing one. For a health alert: pools, new_health and event_source filters.
 */
export async function policyForm(main: HTMLElement, query: URLSearchParams, policyId?: string): Promise<void> {
  const existing = policyId ? await get<Policy>(`${base()}/policies/${enc(policyId)}`) : undefined;
  const alertType = existing?.alert_type ?? query.get('alert_type') ?? HEALTH_ALERT;
  const poolIds = existing?.filters['pool_id'] ?? query.getAll('pool');
  const [pools, webhooks] = await Promise.all([
    Promise.all(
      poolIds.map((id) =>
        get<Pool>(`${acct()}/load_balancers/pools/${enc(id)}`).catch(
          () => ({ id, name: `(missing pool ${id})` }) as Pool,
        ),
      ),
    ),
    get<Webhook[]>(`${base()}/destinations/webhooks`),
  ]);
  const name = field('Name', { required: true, value: existing?.name ?? '' });
  const description = field('Description', { value: existing?.description ?? '' });
  const enabled = checkbox('Enabled', existing?.enabled ?? true);
  const health = existing?.filters['new_health'] ?? ['Healthy', 'Unhealthy'];
  const sources = existing?.filters['event_source'] ?? ['pool', 'origin'];
  const healthy = checkbox('Healthy', health.includes('Healthy'));
  const unhealthy = checkbox('Unhealthy', health.includes('Unhealthy'));
  const poolSource = checkbox('Pool', sources.includes('pool'));
  const originSource = checkbox('Origin', sources.includes('origin'));
  const emails = field(
    'Email recipients',
    { value: (existing?.mechanisms.email?.map((m) => m.id) ?? [state.session?.email ?? '']).join(', ') },
    'Comma-separated addresses',
  );
  const hookBoxes = webhooks.map((w) => ({
    id: w.id,
    box: checkbox(w.name, existing?.mechanisms.webhooks?.some((m) => m.id === w.id) ?? false),
  }));
  const poolBoxes = pools.map((p) => ({ id: p.id, box: checkbox(p.name, true) }));
  const status = notice();
  const isHealth = alertType === HEALTH_ALERT;
  const form = h(
    'form',
    { class: 'card', 'aria-label': 'Notification' },
    h('p', null, 'Alert type: ', h('code', null, alertType)),
    name.row,
    description.row,
    enabled.row,
    isHealth
      ? h(
          'fieldset',
          null,
          h('legend', null, 'Pools'),
          poolBoxes.length ? poolBoxes.map((p) => p.box.row) : h('p', null, 'All pools'),
        )
      : null,
    isHealth ? h('fieldset', null, h('legend', null, 'Health status'), healthy.row, unhealthy.row) : null,
    isHealth ? h('fieldset', null, h('legend', null, 'Event source'), poolSource.row, originSource.row) : null,
    h(
      'fieldset',
      null,
      h('legend', null, 'Delivery'),
      emails.row,
      hookBoxes.map((w) => w.box.row),
    ),
    h('button', { type: 'submit', class: 'primary' }, 'Save'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const filters: Record<string, string[]> = { ...(existing?.filters ?? {}) };
    if (isHealth) {
      const chosen = poolBoxes.filter((p) => p.box.input.checked).map((p) => p.id);
      if (chosen.length) filters['pool_id'] = chosen;
      else delete filters['pool_id'];
      filters['new_health'] = [healthy.input.checked && 'Healthy', unhealthy.input.checked && 'Unhealthy'].filter(
        (v): v is string => Boolean(v),
      );
      filters['event_source'] = [poolSource.input.checked && 'pool', originSource.input.checked && 'origin'].filter(
        (v): v is string => Boolean(v),
      );
      for (const key of ['new_health', 'event_source']) if (filters[key]!.length === 0) delete filters[key];
    }
    const addresses = emails.input.value
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    const body = {
      name: name.input.value,
      description: description.input.value,
      enabled: enabled.input.checked,
      alert_type: alertType,
      mechanisms: {
        email: addresses.map((id) => ({ id })),
        webhooks: hookBoxes.filter((w) => w.box.input.checked).map((w) => ({ id: w.id })),
      },
      filters,
    };
    const request = existing
      ? put<{ id: string }>(`${base()}/policies/${enc(existing.id)}`, body)
      : post<{ id: string }>(`${base()}/policies`, body);
    request.then(
      () => go(href('notifications')),
      (error: unknown) => status.fail(error),
    );
  });
  replace(
    main,
    pageView(existing ? `Edit notification ${existing.name}` : 'Create a Health Alert', tabs(''), guardForm(form)),
  );
}

/** Destinations: webhooks (create, delete) and their last success or failure. */
export async function destinations(main: HTMLElement): Promise<void> {
  const hooks = await get<Webhook[]>(`${base()}/destinations/webhooks`);
  const status = notice();
  const tested = notice();
  const name = field('Webhook name', { required: true });
  const url = field('URL', { required: true, type: 'url' });
  const secret = field('Secret (optional)', { type: 'password', autocomplete: 'off' });
  const form = h(
    'form',
    { class: 'card' },
    name.row,
    url.row,
    secret.row,
    h('button', { type: 'submit' }, 'Create webhook'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    post(`${base()}/destinations/webhooks`, {
      name: name.input.value,
      url: url.input.value,
      ...(secret.input.value ? { secret: secret.input.value } : {}),
    }).then(
      () => void destinations(main),
      (error: unknown) => status.fail(error),
    );
  });
  replace(
    main,
    pageView(
      'Notifications',
      tabs('destinations'),
      tested.element,
      table(
        'Webhooks',
        ['Name', 'URL', 'Type', 'Last success', 'Last failure', 'Actions'],
        hooks.map((w) => [
          h('span', { class: 'name' }, w.name),
          w.url,
          w.type,
          formatTime(w.last_success),
          formatTime(w.last_failure),
          h(
            'span',
            { class: 'actions' },
            writeButton(
              'Test',
              () => {
                tested.ok(`Testing "${w.name}"…`);
                void testWebhook(w).then((text) =>
                  text.includes(': failed') ? tested.fail(new Error(text)) : tested.ok(text),
                );
              },
              { 'aria-label': `Test ${w.name}` },
            ),
            writeButton('Delete', async () => {
              if (!(await confirmDialog(`Delete the webhook "${w.name}"?`, 'Delete'))) return;
              del(`${base()}/destinations/webhooks/${enc(w.id)}`).then(
                () => void destinations(main),
                (error: unknown) => status.fail(error),
              );
            }),
          ),
        ]),
      ),
      h('h2', null, 'Create a webhook'),
      guardForm(form),
    ),
  );
}

/** Alert history: every delivery attempt with its status, attempt number and error; a chart of deliveries. */
export async function history(main: HTMLElement, pageNumber = 1): Promise<void> {
  const since = new Date(Date.now() - 7 * 24 * 3600_000).toISOString();
  const result = await page<HistoryItem>(`${base()}/history`, pageNumber, 50, { since });
  const chartBox = h('div', { class: 'chart', role: 'img', 'aria-label': 'Alert deliveries per hour, last 7 days' });
  replace(
    main,
    pageView(
      'Notifications',
      tabs('history'),
      h('h2', null, 'Deliveries over time'),
      chartBox,
      table(
        `Alert history (${result.totalCount})`,
        ['Sent', 'Alert', 'Type', 'Delivered to', 'Status', 'Attempt', 'Error'],
        result.items.map((item) => [
          formatTime(item.sent),
          h('span', { class: 'name' }, item.name),
          item.alert_type,
          `${item.mechanism_type}: ${item.mechanism}`,
          h(
            'span',
            { class: `badge ${item.status === 'delivered' ? 'good' : item.status === 'failed' ? 'bad' : 'muted'}` },
            item.status,
          ),
          String(item.attempt),
          item.error ?? '',
        ]),
      ),
      pager(result.page, result.totalPages, (next) => void history(main, next)),
    ),
  );
  void import('./charts.ts')
    .then((charts) => charts.deliveriesChart(chartBox, base(), since))
    .catch(() => replace(chartBox, 'The chart could not load.'));
}

/** Streams `POST /dashboard/migration` (one JSON line per step) into `onLine`. */
async function runMigration(
  dryRun: boolean,
  onLine: (line: { progress?: string; report?: MigrationReport; error?: string }) => void,
): Promise<void> {
  const response = await fetch('/dashboard/migration', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-csrf-token': csrf() },
    body: JSON.stringify({ account_id: state.accountId, dry_run: dryRun, per_page: 50 }),
  });
  if (!response.ok || !response.body) {
    const text = await response.text();
    throw new Error(`The migration could not start (HTTP ${response.status}): ${text.slice(0, 200)}`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) onLine(JSON.parse(line) as Parameters<typeof onLine>[0]);
    }
  }
}

interface MigrationReport {
  complete: boolean;
  pools_scanned: number;
  pools_with_legacy_email: number;
  policies_created: string[];
  policies_reused: string[];
  pages_patched: number;
  plan?: {
    policies: { action: string; addresses: string[]; poolIds: string[]; name: string }[];
    pages_to_patch: number[];
  };
  remaining_legacy_pools?: { id: string; name: string }[];
}

/**
 * The notification_email migration: the pools that still carry a legacy email, a preview of the policies it
 * will create (a dry run), and "Run migration" over every page of pools with progress, then the result.
 */
export async function migration(main: HTMLElement): Promise<void> {
  const intro = h('p', null);
  const legacyBox = h('div', null);
  await showLegacy(intro, legacyBox, 1);
  const preview = h('div', { 'aria-live': 'polite' });
  const progressBar = h('progress', { max: 100, value: 0, 'aria-label': 'Migration progress' });
  const log = h('ol', { class: 'log', 'aria-label': 'Migration steps' });
  const result = h('div', { role: 'status' });
  const previewButton = writeButton('Preview policies', () => {
    replace(preview, 'Working out the policies…');
    let report: MigrationReport | undefined;
    runMigration(true, (line) => {
      if (line.report) report = line.report;
      if (line.error) replace(preview, h('p', { role: 'alert' }, line.error));
    }).then(
      () => {
        if (!report) return;
        replace(
          preview,
          table(
            'Policies the migration will create or extend',
            ['Action', 'Policy', 'Recipients', 'Pools'],
            (report.plan?.policies ?? []).map((p) => [
              p.action,
              p.name,
              p.addresses.join(', '),
              String(p.poolIds.length),
            ]),
          ),
          h(
            'p',
            null,
            `${report.pools_with_legacy_email} pool(s) on ${report.plan?.pages_to_patch.length ?? 0} page(s) will have their notification_email emptied.`,
          ),
        );
      },
      (error: unknown) => replace(preview, h('p', { role: 'alert' }, String(error))),
    );
  });
  const runButton = writeButton('Run migration', () => {
    runButton.disabled = true;
    replace(log);
    replace(result);
    // Progress by pages: the listing step names how many pages hold legacy pools, each patch says its page.
    let totalPages = 0;
    let pagesDone = 0;
    runMigration(false, (line) => {
      if (line.progress) {
        log.append(h('li', null, line.progress));
        const total = / on (\d+) page/.exec(line.progress);
        if (total && totalPages === 0) totalPages = Number(total[1]);
        if (/^page \d+:/.test(line.progress)) pagesDone++;
        progressBar.value = totalPages > 0 ? Math.min(99, (100 * pagesDone) / totalPages) : 5;
      }
      if (line.error) replace(result, h('p', { role: 'alert', class: 'notice error' }, line.error));
      if (line.report) {
        progressBar.value = 100;
        const r = line.report;
        replace(
          result,
          h('h2', null, r.complete ? 'Migration complete' : 'Migration incomplete'),
          h(
            'ul',
            null,
            h('li', null, `${r.pools_scanned} pools scanned`),
            h('li', null, `${r.pools_with_legacy_email} pools had a legacy email`),
            h('li', null, `${r.policies_created.length} policies created, ${r.policies_reused.length} reused`),
            h('li', null, `${r.pages_patched} page(s) patched`),
          ),
          r.remaining_legacy_pools?.length
            ? h('p', null, `Still legacy: ${r.remaining_legacy_pools.map((p) => p.name).join(', ')}`)
            : null,
        );
      }
    }).then(
      () => {
        runButton.disabled = false;
        // The result stays on screen; the pool list and the banner catch up.
        window.dispatchEvent(new Event('ledge:legacy-changed'));
        void showLegacy(intro, legacyBox, 1).catch(() => undefined);
      },
      (error: unknown) => {
        runButton.disabled = false;
        replace(result, h('p', { role: 'alert' }, String(error)));
      },
    );
  });
  replace(
    main,
    pageView(
      'Notifications',
      tabs('migration'),
      h('h2', null, 'Email migration'),
      intro,
      legacyBox,
      h('div', { class: 'actions' }, previewButton, runButton),
      preview,
      progressBar,
      log,
      result,
    ),
  );
}

/** The migration page's account status line and its list of legacy pools, a page of all pools at a time. */
async function showLegacy(intro: HTMLElement, box: HTMLElement, pageNumber: number): Promise<void> {
  const [legacy, status] = await Promise.all([
    page<Pool>(`${acct()}/load_balancers/pools`, pageNumber, 50),
    get<{ complete: boolean; pools_with_legacy_email: number }>(`${base()}/legacy_migration`),
  ]);
  replace(
    intro,
    status.complete
      ? 'No pool uses the deprecated notification_email: nothing to migrate.'
      : `${status.pools_with_legacy_email} pool(s) still use the deprecated notification_email. The migration creates load_balancing_health_alert policies for their recipients, then empties the legacy field.`,
  );
  replace(
    box,
    table(
      `Pools with a legacy email (page ${legacy.page} of ${legacy.totalPages} of all pools)`,
      ['Pool', 'Legacy email'],
      legacy.items.filter((p) => p.notification_email).map((p) => [p.name, p.notification_email]),
    ),
    pager(legacy.page, legacy.totalPages, (next) => void showLegacy(intro, box, next)),
  );
}
