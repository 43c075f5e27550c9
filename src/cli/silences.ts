import type { Command } from 'commander';
import { createSilences, deleteSilence, listSilences, updateSilences } from '../client/index.ts';
import { handler } from './context.ts';
import { UsageError } from './errors.ts';
import { printJson, printTable } from './output.ts';
import { isoNow } from '../shared/time.ts';

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--end`: an ISO 8601 time, or a duration from `from` such as 90m, 2h or 1d. */
export function endTime(value: string, from: number): string {
  const duration = /^(\d+)([smhd])$/.exec(value);
  if (duration) return new Date(from + Number(duration[1]) * UNITS[duration[2]!]!).toISOString();
  if (Number.isNaN(Date.parse(value)))
    throw new UsageError(`--end must be a time (ISO 8601) or a duration like 2h, got "${value}"`);
  return new Date(value).toISOString();
}

function startTime(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Number.isNaN(Date.parse(value))) throw new UsageError(`--start must be a time (ISO 8601), got "${value}"`);
  return new Date(value).toISOString();
}

/** `ledge notifications silences ...`: silence a policy for a maintenance window. */
export function registerSilences(notifications: Command): void {
  const silences = notifications
    .command('silences')
    .description('Silence policies for a window: their alerts are recorded in the history as silenced, not sent');
  silences
    .command('list')
    .description('List the silences')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const list = await listSilences(ctx.client, await ctx.accountId());
        if (ctx.json) return printJson(list);
        const now = ctx.clock.now();
        printTable(
          list.map((s) => ({
            ID: s.id,
            Policy: s.policy_id,
            Start: s.start_time,
            End: s.end_time,
            State: Date.parse(s.end_time) <= now ? 'over' : Date.parse(s.start_time) > now ? 'planned' : 'active',
          })),
          ['ID', 'Policy', 'Start', 'End', 'State'],
          'No silences.',
        );
      }),
    );
  silences
    .command('create')
    .description('Silence a policy from --start (default now) until --end')
    .requiredOption('--policy <id>', 'the policy to silence')
    .requiredOption('--end <time|duration>', 'when the silence ends: ISO 8601, or a duration like 90m, 2h, 1d')
    .option('--start <time>', 'when it starts (ISO 8601; default now)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const start = startTime(ctx.options['start'] as string | undefined);
        const end = endTime(ctx.options['end'] as string, start ? Date.parse(start) : ctx.clock.now());
        const body = [
          { policy_id: ctx.options['policy'] as string, end_time: end, ...(start ? { start_time: start } : {}) },
        ];
        const [created] = await createSilences(ctx.client, await ctx.accountId(), body);
        if (ctx.json) return printJson(created);
        process.stdout.write(
          `Silenced policy ${created!.policy_id} until ${created!.end_time} (silence ${created!.id}).\n`,
        );
      }),
    );
  silences
    .command('update <id>')
    .description('Move the window of a silence (--end now ends it at once)')
    .option('--end <time|duration>', 'new end: ISO 8601, a duration from now, or "now"')
    .option('--start <time>', 'new start (ISO 8601)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [id]) => {
        const rawEnd = ctx.options['end'] as string | undefined;
        const start = startTime(ctx.options['start'] as string | undefined);
        if (rawEnd === undefined && start === undefined) throw new UsageError('give --end or --start');
        const end =
          rawEnd === undefined ? undefined : rawEnd === 'now' ? isoNow(ctx.clock) : endTime(rawEnd, ctx.clock.now());
        const body = [{ id: id as string, ...(start ? { start_time: start } : {}), ...(end ? { end_time: end } : {}) }];
        const [updated] = await updateSilences(ctx.client, await ctx.accountId(), body);
        if (ctx.json) return printJson(updated);
        process.stdout.write(`Silence ${updated!.id}: ${updated!.start_time} to ${updated!.end_time}.\n`);
      }),
    );
  silences
    .command('delete <id>')
    .description('Delete a silence (its policy alerts again)')
    .action(
      handler(async (ctx, [id]) => {
        await deleteSilence(ctx.client, await ctx.accountId(), id as string);
        process.stdout.write(`Deleted silence ${id as string}.\n`);
      }),
    );
}
