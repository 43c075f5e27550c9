import {
  createPolicy,
  createWebhook,
  deletePolicy,
  deleteWebhook,
  getPolicy,
  listPolicies,
  listPools,
  listWebhooks,
  updatePolicy,
  type NotificationHistoryItem,
  type NotificationPolicy,
  type Pool,
  type WebhookDestination,
} from '../../../client/index.ts';
import { client, csrf, get, page, put } from '../api.ts';
import { h, replace } from '../dom.ts';
import { go, href } from '../router.ts';
import { acct, state } from '../state.ts';
import { errorText } from '../ui-kit.ts';
import {
  legacyStatusText,
  progressAfter,
  renderLegacyPools,
  renderMigrationPage,
  renderMigrationPlan,
  renderMigrationResult,
  type MigrationLine,
  type MigrationPage,
  type MigrationProgress,
  type MigrationReport,
} from './email-migration.render.ts';
import {
  HEALTH_ALERT,
  renderDestinations,
  renderHistory,
  renderPolicies,
  renderPolicyForm,
} from './notifications.render.ts';

/** The notification pages' data: loaded and saved through the client; notifications.render.ts draws them. */

export { HEALTH_ALERT };
const base = () => `${acct()}/alerting/v3`;
const HISTORY_DAYS = 7;

/**
 * Sends a webhook Cloudflare's test message: what Cloudflare's API offers as a test is saving a webhook destination
 * (create or update sends a test message first and refuses the save, 17008, when the receiver does not accept it).
 * Re-saving with the same name and URL keeps the stored secret, so the test is signed as real alerts are.
 */
async function testWebhook(hook: WebhookDestination): Promise<string> {
  try {
    await put(`${base()}/destinations/webhooks/${encodeURIComponent(hook.id)}`, { name: hook.name, url: hook.url });
    return `${hook.name}: test message accepted`;
  } catch (error) {
    return `${hook.name}: failed, ${errorText(error)}`;
  }
}

/**
 * A policy's "Test": a test message to each of its webhooks, and what happened. Email has no test in Cloudflare's
 * API (nor in Ledge's), so recipients are named as not tested rather than sent a made-up alert.
 */
async function testPolicy(
  policy: NotificationPolicy,
  hooks: WebhookDestination[],
): Promise<{ text: string; failed: boolean }> {
  const ids = (policy.mechanisms.webhooks ?? []).map((m) => m.id ?? '');
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
  const [list, hooks, pools] = await Promise.all([
    listPolicies(client, state.accountId),
    listWebhooks(client, state.accountId),
    listPools(client, state.accountId),
  ]);
  replace(
    main,
    renderPolicies(
      { policies: list, hooks, poolNames: new Map(pools.map((p) => [p.id, p.name])) },
      {
        test: (policy) => testPolicy(policy, hooks),
        remove: async (id) => {
          await deletePolicy(client, state.accountId, id);
          await policies(main);
        },
      },
    ),
  );
}

/**
 * The notification form, for a new policy (pre-filled from the query: "Create a Health Alert" passes the pool) or
 * an existing one, with every pool of the account to pick from.
 */
export async function policyForm(main: HTMLElement, query: URLSearchParams, policyId?: string): Promise<void> {
  const [existing, pools, hooks] = await Promise.all([
    policyId ? getPolicy(client, state.accountId, policyId) : Promise.resolve(undefined),
    listPools(client, state.accountId),
    listWebhooks(client, state.accountId),
  ]);
  const alertType = existing?.alert_type ?? query.get('alert_type') ?? HEALTH_ALERT;
  replace(
    main,
    renderPolicyForm(
      {
        existing,
        alertType,
        pools: pools.map((p) => ({ id: p.id, name: p.name })),
        chosenPools: existing?.filters.pool_id ?? query.getAll('pool'),
        hooks,
        defaultEmail: state.session?.email ?? '',
      },
      {
        save: async (body) => {
          if (existing) await updatePolicy(client, state.accountId, existing.id, body);
          else await createPolicy(client, state.accountId, body);
          go(href('notifications'));
        },
      },
    ),
  );
}

/** Destinations: webhooks (create, delete) and their last success or failure. */
export async function destinations(main: HTMLElement): Promise<void> {
  const hooks = await listWebhooks(client, state.accountId);
  replace(
    main,
    renderDestinations(hooks, {
      test: testWebhook,
      remove: async (id) => {
        await deleteWebhook(client, state.accountId, id);
        await destinations(main);
      },
      create: async (input) => {
        await createWebhook(client, state.accountId, input);
        await destinations(main);
      },
    }),
  );
}

/** Alert history: every delivery attempt of the last days, a page at a time, and a chart of deliveries. */
export async function history(main: HTMLElement, pageNumber = 1): Promise<void> {
  const since = new Date(Date.now() - HISTORY_DAYS * 24 * 3600_000).toISOString();
  const result = await page<NotificationHistoryItem>(`${base()}/history`, pageNumber, 50, { since });
  const { view, chartBox } = renderHistory(
    { ...result, days: HISTORY_DAYS },
    { showPage: (next) => void history(main, next) },
  );
  replace(main, view);
  if (result.totalCount === 0) return;
  void import('./charts.ts')
    .then((charts) => charts.deliveriesChart(chartBox, base(), since))
    .catch(() => replace(chartBox, 'The chart could not load.'));
}

/** Streams `POST /dashboard/migration` (one JSON line per step) into `onLine`. */
async function runMigration(dryRun: boolean, onLine: (line: MigrationLine) => void): Promise<void> {
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
      if (line) onLine(JSON.parse(line) as MigrationLine);
    }
  }
}

/**
 * The notification_email migration: the pools that still carry a legacy email, a preview of the policies it
 * will create (a dry run), and "Run migration" over every page of pools with progress, then the result
 * (email-migration.render.ts draws each part).
 */
export async function migration(main: HTMLElement): Promise<void> {
  const preview = () => {
    replace(page.preview, 'Working out the policies…');
    let report: MigrationReport | undefined;
    runMigration(true, (line) => {
      if (line.report) report = line.report;
      if (line.error) replace(page.preview, h('p', { role: 'alert' }, line.error));
    }).then(
      () => {
        if (report) replace(page.preview, ...renderMigrationPlan(report));
      },
      (error: unknown) => replace(page.preview, h('p', { role: 'alert' }, String(error))),
    );
  };
  const run = () => {
    page.runButton.disabled = true;
    replace(page.log);
    replace(page.result);
    let progress: MigrationProgress = { totalPages: 0, pagesDone: 0 };
    runMigration(false, (line) => {
      if (line.progress) {
        page.log.append(h('li', null, line.progress));
        const next = progressAfter(progress, line.progress);
        progress = next;
        page.progressBar.value = next.percent;
      }
      if (line.error) replace(page.result, h('p', { role: 'alert', class: 'notice error' }, line.error));
      if (line.report) {
        page.progressBar.value = 100;
        replace(page.result, ...renderMigrationResult(line.report));
      }
    }).then(
      () => {
        page.runButton.disabled = false;
        // The result stays on screen; the pool list and the banner catch up.
        window.dispatchEvent(new Event('ledge:legacy-changed'));
        void showLegacy(page, 1).catch(() => undefined);
      },
      (error: unknown) => {
        page.runButton.disabled = false;
        replace(page.result, h('p', { role: 'alert' }, String(error)));
      },
    );
  };
  const page = renderMigrationPage({ preview, run });
  await showLegacy(page, 1);
  replace(main, page.view);
}

/** The migration page's account status line and its list of legacy pools, a page of all pools at a time. */
async function showLegacy(target: MigrationPage, pageNumber: number): Promise<void> {
  const [legacy, status] = await Promise.all([
    page<Pool>(`${acct()}/load_balancers/pools`, pageNumber, 50),
    get<{ complete: boolean; pools_with_legacy_email: number }>(`${base()}/legacy_migration`),
  ]);
  replace(target.intro, legacyStatusText(status));
  replace(target.legacyBox, ...renderLegacyPools(legacy, { showPage: (next) => void showLegacy(target, next) }));
}
