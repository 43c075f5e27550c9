import type { MigrationApi, PoolSummary } from './api.ts';
import type { MigrationReport } from '../client/index.ts';
import { PolicyCoverage, type PolicyOptions } from './policies.ts';
import { poolPages, scanPools } from './scan.ts';

export interface MigrateOptions extends PolicyOptions {
  perPage: number;
  dryRun: boolean;
  /** How many times to re-list and clean when pools keep changing during the run. */
  maxPasses: number;
  /** Told each step as it happens; awaited, so a caller can pace or observe the run between steps. */
  progress?: (message: string) => void | Promise<void>;
}

/**
 * The migration procedure: (1) list every pool and keep those with a legacy email, (2) make sure a
 * load_balancing_health_alert policy covers each of them with its addresses, (3) empty
 * notification_email page by page with the bulk PATCH, then verify by listing again; repeat until a
 * full pass finds no legacy email. A page is patched only after every legacy pool on it, as listed
 * just before the patch, is covered: no recipient is dropped.
 */
export async function migrate(api: MigrationApi, options: MigrateOptions): Promise<MigrationReport> {
  const started = performance.now();
  const say = options.progress ?? (() => {});
  const coverage = new PolicyCoverage(api, options);

  await say('Step 1/3: listing pools');
  const scan = await scanPools(api, options.perPage);
  await say(
    `  ${count(scan.pools, 'pool')}, ${scan.legacy.length} with a legacy notification_email${onPages(scan.legacyPages)}`,
  );
  await coverage.refresh();

  const report: MigrationReport = {
    dry_run: options.dryRun,
    complete: scan.legacy.length === 0,
    pools_scanned: scan.pools,
    pools_with_legacy_email: scan.legacy.length,
    policies_created: [],
    policies_reused: [],
    pages_patched: 0,
    passes: 0,
    duration_ms: 0,
  };

  if (options.dryRun) {
    const policies = coverage.plan(scan.legacy);
    report.plan = { policies, pages_to_patch: scan.legacyPages };
    report.policies_reused = [...coverage.reused];
    // The dry run walks the same three steps, saying what each would do.
    await say('Step 2/3: creating notification policies (dry run: none created)');
    if (policies.length === 0) await say('  no policy needed');
    for (const change of policies) {
      const verb = change.action === 'create' ? 'would create' : `would extend ${change.policyId}:`;
      await say(`  ${verb} policy "${change.name}" (${count(change.poolIds.length, 'pool')})`);
    }
    await say('Step 3/3: emptying notification_email page by page (dry run: nothing patched)');
    await say(
      scan.legacyPages.length === 0
        ? '  no page to patch'
        : `  would patch ${scan.legacyPages.length === 1 ? 'page' : 'pages'} ${scan.legacyPages.join(', ')}`,
    );
    return finish(report, started);
  }

  await say('Step 2/3: creating notification policies');
  const changes = await coverage.ensure(scan.legacy);
  for (const change of changes) {
    await say(
      `  ${change.action === 'create' ? 'created' : 'extended'} policy "${change.name}" (${change.poolIds.length} pools)`,
    );
  }

  await say('Step 3/3: emptying notification_email page by page');
  let remaining: PoolSummary[] = scan.legacy;
  while (remaining.length > 0 && report.passes < options.maxPasses) {
    report.passes++;
    for await (const { page, pools } of poolPages(api, options.perPage)) {
      const legacy = pools.filter((pool) => pool.notification_email !== '');
      if (legacy.length === 0) continue;
      await coverage.ensure(legacy);
      await api.clearLegacyEmails(page, options.perPage);
      report.pages_patched++;
      await say(`  page ${page}: cleared ${legacy.length} legacy email(s)`);
    }
    const verify = await scanPools(api, options.perPage);
    report.pools_scanned = Math.max(report.pools_scanned, verify.pools);
    remaining = verify.legacy;
    if (remaining.length > 0) {
      await say(`  ${remaining.length} pool(s) gained a legacy email during the run: another pass`);
    }
  }

  report.complete = remaining.length === 0;
  if (!report.complete) report.remaining_legacy_pools = remaining.map(({ id, name }) => ({ id, name }));
  report.policies_created = [...coverage.created];
  report.policies_reused = [...coverage.reused].filter((id) => !coverage.created.has(id));
  await say(
    report.complete
      ? 'Verified: no pool keeps a legacy notification_email.'
      : 'Incomplete: some pools still have a legacy email.',
  );
  return finish(report, started);
}

function finish(report: MigrationReport, started: number): MigrationReport {
  report.duration_ms = Math.round(performance.now() - started);
  return report;
}

/** "1 pool", "3 pools". */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** " on page 2", " on pages 1, 2", or nothing when no page has one. */
function onPages(pages: readonly number[]): string {
  if (pages.length === 0) return '';
  return ` on ${pages.length === 1 ? 'page' : 'pages'} ${pages.join(', ')}`;
}
