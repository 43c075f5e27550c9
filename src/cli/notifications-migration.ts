import { Option, type Command } from 'commander';
import { MigrationApi, migrate, migrationStatus, type MigrationReport } from '../email-migration/index.ts';
import { handler } from './context.ts';
import { UsageError } from './errors.ts';
import { printJson, printTable } from './output.ts';

const HEALTH_VALUES = ['Healthy', 'Unhealthy'];
const SOURCE_VALUES = ['pool', 'origin'];
const DEFAULT_PAGE_SIZE = 100;

/**
 * `ledge notifications migrate` and `migration-status`: the spec's migration from the legacy pool
 * `notification_email` to account-level policies. Client-side only: it talks to /client/v4, so it works
 * against Ledge and any compatible API (base URL and credentials as for every command).
 */
export function registerMigrationCommands(program: Command): void {
  const notifications =
    program.commands.find((c) => c.name() === 'notifications') ??
    program.command('notifications').description('Account-level notifications (alert policies, webhooks, history)');

  notifications
    .command('migrate')
    .description('Move every pool from the legacy notification_email to load_balancing_health_alert policies')
    .option('--dry-run', 'print the plan (pools found, policies to create, pages to patch) and change nothing')
    .option('--webhook <id...>', 'also deliver the new policies to these webhook destinations')
    .addOption(
      new Option('--new-health <value...>', 'health values that alert').choices(HEALTH_VALUES).default(HEALTH_VALUES),
    )
    .addOption(new Option('--event-source <value...>', 'objects watched').choices(SOURCE_VALUES).default(SOURCE_VALUES))
    .option(
      '--page-size <n>',
      `pools per page when listing and bulk-patching (the API's default is 25)`,
      String(DEFAULT_PAGE_SIZE),
    )
    .option('--max-passes <n>', 'how often to re-list and clean while pools keep changing', '5')
    .option('--json', 'print a JSON report')
    .addHelpText(
      'after',
      '\nSafe to re-run: policies carry a deterministic marker, so an interrupted run resumes without duplicates.\n' +
        'Exits 1 while the migration is incomplete.',
    )
    .action(
      handler(async (ctx) => {
        const o = ctx.options;
        const perPage = positiveInt(o['pageSize'], '--page-size', 1000);
        const api = new MigrationApi(ctx.client, await ctx.accountId());
        const report = await migrate(api, {
          perPage,
          maxPasses: positiveInt(o['maxPasses'], '--max-passes', 100),
          dryRun: o['dryRun'] === true,
          newHealth: o['newHealth'] as string[],
          eventSource: o['eventSource'] as string[],
          webhookIds: (o['webhook'] as string[] | undefined) ?? [],
          progress: progressWriter(ctx.json),
        });
        if (ctx.json) printJson(report);
        else printReport(report);
        if (!report.dry_run && !report.complete) process.exitCode = 1;
      }),
    );

  notifications
    .command('migration-status')
    .description('Per pool: migrated or not; and whether the account still has legacy notification emails')
    .option('--page-size <n>', 'pools per page when listing', String(DEFAULT_PAGE_SIZE))
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const api = new MigrationApi(ctx.client, await ctx.accountId());
        const status = await migrationStatus(api, positiveInt(ctx.options['pageSize'], '--page-size', 1000));
        if (ctx.json) {
          printJson(status);
          return;
        }
        printTable(
          status.pools.map((p) => ({
            Pool: p.name,
            ID: p.id,
            State: p.state,
            'Legacy email': p.notification_email,
            Policies: p.policies.length,
          })),
          ['Pool', 'ID', 'State', 'Legacy email', 'Policies'],
          'No pools.',
        );
        const { migrated, legacy, no_alerts: none } = status.counts;
        process.stdout.write(
          `\nMigration ${status.complete ? 'complete' : 'incomplete'}: ${migrated} migrated, ${legacy} with a legacy email, ${none} without alerts.\n`,
        );
      }),
    );
}

function positiveInt(value: unknown, flag: string, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`${flag} must be an integer from 1 to ${max}`);
  return n;
}

/** Progress goes to stdout in human mode, and to stderr on a terminal in --json mode (stdout stays JSON). */
function progressWriter(json: boolean): ((message: string) => void) | undefined {
  if (!json) return (message) => process.stdout.write(`${message}\n`);
  return process.stderr.isTTY ? (message) => process.stderr.write(`${message}\n`) : undefined;
}

function printReport(report: MigrationReport): void {
  if (report.dry_run && report.plan) {
    process.stdout.write(`\nDry run: nothing was changed.\n`);
    for (const change of report.plan.policies) {
      const verb = change.action === 'create' ? 'create policy' : `extend policy ${change.policyId}`;
      const pools = `${change.poolIds.length} pool${change.poolIds.length === 1 ? '' : 's'}`;
      process.stdout.write(`  would ${verb} "${change.name}" covering ${pools}\n`);
    }
    const pages = report.plan.pages_to_patch;
    process.stdout.write(
      pages.length === 0
        ? '  no page to patch\n'
        : `  would bulk-patch ${pages.length === 1 ? 'page' : 'pages'} ${pages.join(', ')}\n`,
    );
    return;
  }
  process.stdout.write(
    `\n${report.complete ? 'Migration complete' : 'Migration INCOMPLETE'}: ${report.pools_scanned} pools scanned, ` +
      `${report.pools_with_legacy_email} had a legacy email; ${report.policies_created.length} policies created, ` +
      `${report.policies_reused.length} reused; ${report.pages_patched} page(s) patched in ${report.duration_ms} ms.\n`,
  );
  const remaining = report.remaining_legacy_pools ?? [];
  if (remaining.length === 0) return;
  process.stdout.write(`Still with a legacy notification_email (run the migration again to pick them up):\n`);
  for (const pool of remaining) process.stdout.write(`  ${pool.name} (${pool.id})\n`);
}
