import type { MigrationReport, Pool } from '../../../client/index.ts';
import { h, table } from '../dom.ts';
import { pageView, pager, writeButton } from '../ui-kit.ts';
import { tabs } from './notifications.render.ts';

/** The notification_email migration page drawn from its data; notifications.ts runs the migration. */

export type { MigrationReport };

/** One line of the migration's stream: a step, the final report, or why it stopped. */
export interface MigrationLine {
  progress?: string;
  report?: MigrationReport;
  error?: string;
}

/** The page's parts that the running migration fills in (each replaced as its data arrives). */
export interface MigrationPage {
  view: HTMLElement;
  intro: HTMLElement;
  legacyBox: HTMLElement;
  preview: HTMLElement;
  progressBar: HTMLProgressElement;
  log: HTMLOListElement;
  result: HTMLElement;
  runButton: HTMLButtonElement;
}

/** The page's frame: status, the legacy pools, "Preview policies" and "Run migration", progress, the result. */
export function renderMigrationPage(actions: { preview(): void; run(): void }): MigrationPage {
  const intro = h('p', null);
  const legacyBox = h('div', null);
  const preview = h('div', { 'aria-live': 'polite' });
  const progressBar = h('progress', { max: 100, value: 0, 'aria-label': 'Migration progress' });
  const log = h('ol', { class: 'log', 'aria-label': 'Migration steps' });
  const result = h('div', { role: 'status' });
  const previewButton = writeButton('Preview policies', () => actions.preview());
  const runButton = writeButton('Run migration', () => actions.run());
  const view = pageView(
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
  );
  return { view, intro, legacyBox, preview, progressBar, log, result, runButton };
}

/** The account's status line: whether any pool still carries the deprecated notification_email. */
export function legacyStatusText(status: { complete: boolean; pools_with_legacy_email: number }): string {
  return status.complete
    ? 'No pool uses the deprecated notification_email: nothing to migrate.'
    : `${status.pools_with_legacy_email} pool(s) still use the deprecated notification_email. The migration creates load_balancing_health_alert policies for their recipients, then empties the legacy field.`;
}

/** The pools of one page of all pools that still carry a legacy email, and the pager over all pools. */
export function renderLegacyPools(
  legacy: { items: Pool[]; page: number; totalPages: number },
  actions: { showPage(page: number): void },
): HTMLElement[] {
  return [
    table(
      `Pools with a legacy email (page ${legacy.page} of ${legacy.totalPages} of all pools)`,
      ['Pool', 'Legacy email'],
      legacy.items.filter((p) => p.notification_email).map((p) => [p.name, p.notification_email]),
    ),
    pager(legacy.page, legacy.totalPages, actions.showPage),
  ];
}

/** A dry run's plan: the policies the migration will create or extend, and how many pools it will empty. */
export function renderMigrationPlan(report: MigrationReport): HTMLElement[] {
  return [
    table(
      'Policies the migration will create or extend',
      ['Action', 'Policy', 'Recipients', 'Pools'],
      (report.plan?.policies ?? []).map((p) => [p.action, p.name, p.addresses.join(', '), String(p.poolIds.length)]),
    ),
    h(
      'p',
      null,
      `${report.pools_with_legacy_email} pool(s) on ${report.plan?.pages_to_patch.length ?? 0} page(s) will have their notification_email emptied.`,
    ),
  ];
}

/** What a run did, and the pools it could not migrate (by name). */
export function renderMigrationResult(report: MigrationReport): (HTMLElement | null)[] {
  return [
    h('h2', null, report.complete ? 'Migration complete' : 'Migration incomplete'),
    h(
      'ul',
      null,
      h('li', null, `${report.pools_scanned} pools scanned`),
      h('li', null, `${report.pools_with_legacy_email} pools had a legacy email`),
      h('li', null, `${report.policies_created.length} policies created, ${report.policies_reused.length} reused`),
      h('li', null, `${report.pages_patched} page(s) patched`),
    ),
    report.remaining_legacy_pools?.length
      ? h('p', null, `Still legacy: ${report.remaining_legacy_pools.map((p) => p.name).join(', ')}`)
      : null,
  ];
}

/**
 * How far a run is, in pages: the listing step names the pages that hold legacy pools ("… on pages 1, 3"),
 * each patch says its page ("page 3: cleared …"; src/email-migration/migrate.ts words both).
 */
export interface MigrationProgress {
  totalPages: number;
  pagesDone: number;
}

/** The progress after one step, and the bar's percentage (99 at most until the report: 100 is the end). */
export function progressAfter(progress: MigrationProgress, step: string): MigrationProgress & { percent: number } {
  let { totalPages, pagesDone } = progress;
  const listed = / on pages? (\d+(?:, \d+)*)$/.exec(step);
  if (listed && totalPages === 0) totalPages = listed[1]!.split(', ').length;
  if (/^page \d+:/.test(step)) pagesDone++;
  return { totalPages, pagesDone, percent: totalPages > 0 ? Math.min(99, (100 * pagesDone) / totalPages) : 5 };
}
