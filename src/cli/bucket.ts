import type { Command } from 'commander';
import {
  createBucket,
  deleteBucket,
  getLifecycleRules,
  listBuckets,
  putLifecycleRules,
  type LifecycleConditionSummary,
  type LifecycleRuleSummary,
} from '../client/index.ts';
import { registerBucketPublic } from './bucket-public.ts';
import { handler } from './context.ts';
import { CliError, UsageError } from './errors.ts';
import { printJson, printTable } from './output.ts';

export function registerBucket(program: Command): void {
  const bucket = program.command('bucket').description('Manage R2-compatible object storage buckets');

  bucket
    .command('create <name>')
    .description('Create a bucket (3-63 lowercase letters, digits and hyphens)')
    .option('--location <hint>', 'location hint (apac, eeur, enam, weur, wnam, oc)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [name]) => {
        const location = ctx.options['location'] as string | undefined;
        const created = await createBucket(
          ctx.client,
          await ctx.accountId(),
          name as string,
          location ? { locationHint: location } : {},
        );
        if (ctx.json) printJson(created);
        else process.stdout.write(`Created bucket ${created.name}.\n`);
      }),
    );

  bucket
    .command('list')
    .description('List buckets with their creation dates')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const all = await listBuckets(ctx.client, await ctx.accountId());
        if (ctx.json) printJson(all);
        else
          printTable(
            all.map((b) => ({ name: b.name, creation_date: b.creation_date })),
            ['name', 'creation_date'],
            'No buckets.',
          );
      }),
    );

  bucket
    .command('delete <name>')
    .description('Delete an empty bucket')
    .action(
      handler(async (ctx, [name]) => {
        await deleteBucket(ctx.client, await ctx.accountId(), name as string);
        process.stdout.write(`Deleted bucket ${name as string}.\n`);
      }),
    );

  registerLifecycle(bucket);
  registerBucketPublic(bucket);
}

const DAY_SECONDS = 86_400;

/** `ledge bucket lifecycle list|add|remove`: the same rules as `wrangler r2 bucket lifecycle`. */
function registerLifecycle(bucket: Command): void {
  const lifecycle = bucket.command('lifecycle').description('Manage lifecycle rules of a bucket');

  lifecycle
    .command('list <bucket>')
    .description('List lifecycle rules of a bucket')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [name]) => {
        const rules = await getLifecycleRules(ctx.client, await ctx.accountId(), name as string);
        if (ctx.json) printJson(rules);
        else
          printTable(
            rules.map((r) => ({
              id: r.id,
              enabled: r.enabled ? 'yes' : 'no',
              prefix: r.conditions?.prefix || '(all)',
              actions: describeActions(r),
            })),
            ['id', 'enabled', 'prefix', 'actions'],
            'No lifecycle rules.',
          );
      }),
    );

  lifecycle
    .command('add <bucket> <id>')
    .description('Add a lifecycle rule (ages in days; --*-seconds for finer ones)')
    .option('--prefix <prefix>', 'only objects and uploads whose key starts with this')
    .option('--expire-days <n>', 'delete objects this many days after upload')
    .option('--expire-seconds <n>', 'delete objects this many seconds after upload')
    .option('--ia-transition-days <n>', 'move objects to InfrequentAccess this many days after upload')
    .option('--abort-multipart-days <n>', 'abort multipart uploads this many days after they start')
    .action(
      handler(async (ctx, [name, id]) => {
        const age = (option: string, unit: number) => {
          const raw = ctx.options[option] as string | undefined;
          if (raw === undefined) return undefined;
          if (!/^\d+$/.test(raw)) throw new UsageError(`--${kebab(option)} must be a whole number, got "${raw}"`);
          return { condition: { type: 'Age' as const, maxAge: Number(raw) * unit } };
        };
        const expire = age('expireSeconds', 1) ?? age('expireDays', DAY_SECONDS);
        const transition = age('iaTransitionDays', DAY_SECONDS);
        const abort = age('abortMultipartDays', DAY_SECONDS);
        if (!expire && !transition && !abort) {
          throw new UsageError(
            'give at least one action: --expire-days, --expire-seconds, --ia-transition-days or --abort-multipart-days',
          );
        }
        const rule: LifecycleRuleSummary = {
          id: id as string,
          enabled: true,
          conditions: { prefix: (ctx.options['prefix'] as string | undefined) ?? '' },
          ...(expire ? { deleteObjectsTransition: expire } : {}),
          ...(abort ? { abortMultipartUploadsTransition: abort } : {}),
          ...(transition ? { storageClassTransitions: [{ ...transition, storageClass: 'InfrequentAccess' }] } : {}),
        };
        const accountId = await ctx.accountId();
        const rules = await getLifecycleRules(ctx.client, accountId, name as string);
        if (rules.some((r) => r.id === rule.id))
          throw new CliError(`Bucket ${name as string} already has a rule "${rule.id}".`);
        await putLifecycleRules(ctx.client, accountId, name as string, [...rules, rule]);
        process.stdout.write(`Added lifecycle rule ${rule.id} to bucket ${name as string}.\n`);
      }),
    );

  lifecycle
    .command('remove <bucket> <id>')
    .description('Remove a lifecycle rule')
    .action(
      handler(async (ctx, [name, id]) => {
        const accountId = await ctx.accountId();
        const rules = await getLifecycleRules(ctx.client, accountId, name as string);
        const kept = rules.filter((r) => r.id !== id);
        if (kept.length === rules.length) throw new CliError(`Bucket ${name as string} has no rule "${id as string}".`);
        await putLifecycleRules(ctx.client, accountId, name as string, kept);
        process.stdout.write(`Removed lifecycle rule ${id as string} from bucket ${name as string}.\n`);
      }),
    );
}

function describeActions(rule: LifecycleRuleSummary): string {
  const when = (c: LifecycleConditionSummary | undefined) =>
    !c ? 'never' : c.type === 'Age' ? `after ${formatAge(c.maxAge)}` : `on ${c.date}`;
  const actions: string[] = [];
  if (rule.deleteObjectsTransition) actions.push(`expire ${when(rule.deleteObjectsTransition.condition)}`);
  for (const t of rule.storageClassTransitions ?? []) actions.push(`to ${t.storageClass} ${when(t.condition)}`);
  if (rule.abortMultipartUploadsTransition)
    actions.push(`abort uploads ${when(rule.abortMultipartUploadsTransition.condition)}`);
  return actions.join(', ') || '(none)';
}

const formatAge = (seconds: number) =>
  seconds % DAY_SECONDS === 0 ? `${seconds / DAY_SECONDS} days` : `${seconds} seconds`;
const kebab = (option: string) => option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
