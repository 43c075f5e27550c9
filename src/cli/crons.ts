import type { Command } from 'commander';
import { getSchedules, listCronRuns, triggerCron, type CronRun } from '../client/index.ts';
import { handler, type CliContext } from './context.ts';
import { projectAccountId, readProjectConfig, type ProjectConfig } from './deploy.ts';
import { CliError } from './errors.ts';
import { printJson, printTable } from './output.ts';

/** The script a command acts on: the argument, else `name` of the project in the current directory. */
async function target(ctx: CliContext, script: string | undefined): Promise<{ script: string; accountId: string }> {
  let config: ProjectConfig | undefined;
  if (!script) config = await readProjectConfig(process.cwd());
  return { script: script ?? config!.name, accountId: await projectAccountId(ctx, config) };
}

function runRow(run: CronRun): Record<string, unknown> {
  return {
    started: run.started_on,
    cron: run.cron,
    source: run.source,
    status: run.status,
    ms: run.duration_ms,
    error: run.error ?? '',
  };
}

/** `ledge crons list|runs|trigger [script]`: a script's Cron Triggers and the runs of its scheduled() handler. */
export function registerCrons(program: Command): void {
  const crons = program
    .command('crons')
    .description("Cron Triggers: a script's schedules (triggers.crons in wrangler.toml) and their runs");
  crons
    .command('list [script]')
    .description("list a script's Cron Triggers (default script: `name` from wrangler.toml)")
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [script]) => {
        const t = await target(ctx, script as string | undefined);
        const schedules = await getSchedules(ctx.client, t.accountId, t.script);
        if (ctx.json) printJson(schedules);
        else
          printTable(
            schedules as unknown as Record<string, unknown>[],
            ['cron', 'created_on', 'modified_on'],
            `${t.script} has no Cron Triggers.`,
          );
      }),
    );
  crons
    .command('runs [script]')
    .description('list the recorded runs of its scheduled() handler, newest first')
    .option('--limit <n>', 'how many (1-100)', '20')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [script]) => {
        const t = await target(ctx, script as string | undefined);
        const limit = Number(ctx.options['limit']);
        if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new CliError('--limit must be 1 to 100');
        const runs = await listCronRuns(ctx.client, t.accountId, t.script, limit);
        if (ctx.json) printJson(runs);
        else
          printTable(
            runs.map(runRow),
            ['started', 'cron', 'source', 'status', 'ms', 'error'],
            `${t.script} has not run on a schedule yet.`,
          );
      }),
    );
  crons
    .command('trigger [script]')
    .description('run its scheduled() handler now, as the given cron (default: its first Cron Trigger)')
    .option('--cron <expression>', 'the cron the handler sees as controller.cron')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [script]) => {
        const t = await target(ctx, script as string | undefined);
        const run = await triggerCron(ctx.client, t.accountId, t.script, ctx.options['cron'] as string | undefined);
        if (ctx.json) printJson(run);
        else
          process.stdout.write(
            `${t.script}: scheduled() ${run.status} in ${run.duration_ms} ms${run.error ? ` (${run.error})` : ''}\n`,
          );
        if (run.status !== 'ok') process.exitCode = 1;
      }),
    );
}
