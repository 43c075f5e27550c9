import type { Command } from 'commander';
import { createBucket, deleteBucket, listBuckets } from '../client/index.ts';
import { handler } from './context.ts';
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
}
