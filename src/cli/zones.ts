import type { Command } from 'commander';
import { createZone, deleteZone, findZone, listZones, type ApiClient, type Zone } from '../client/index.ts';
import { handler } from './context.ts';
import { CliError } from './errors.ts';
import { printJson, printTable } from './output.ts';

/** A zone given by id or name, or a clear error. */
export async function resolveZone(api: ApiClient, idOrName: string): Promise<Zone> {
  const zone = await findZone(api, idOrName);
  if (!zone) throw new CliError(`no zone named "${idOrName}" (see \`ledge zones list\`)`);
  return zone;
}

function printZone(zone: Zone): void {
  process.stdout.write(`${zone.name} (${zone.id})\n`);
  process.stdout.write(
    `  status: ${zone.status}  type: ${zone.type}  account: ${zone.account.name} (${zone.account.id})\n`,
  );
  process.stdout.write(`  created: ${zone.created_on}\n`);
}

export function registerZones(program: Command): void {
  const zones = program
    .command('zones')
    .description('Manage zones: the hostnames (example.com) that load balancers live under');

  zones
    .command('create <name>')
    .description('Create a zone in the account (active at once: Ledge has no DNS to delegate)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [name]) => {
        const zone = await createZone(ctx.client, await ctx.accountId(), name as string);
        if (ctx.json) printJson(zone);
        else process.stdout.write(`Created zone ${zone.name} (${zone.id}).\n`);
      }),
    );

  zones
    .command('list')
    .description('List the zones of the account (every page), ordered by name')
    .option('--name <name>', 'only the zone with this name (or starts_with:, ends_with:, contains: a fragment)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const list = await listZones(ctx.client, {
          accountId: await ctx.accountId(),
          name: ctx.options['name'] as string | undefined,
        });
        if (ctx.json) return printJson(list);
        printTable(
          list.map((z) => ({ Name: z.name, ID: z.id, Status: z.status, Created: z.created_on })),
          ['Name', 'ID', 'Status', 'Created'],
          'No zones.',
        );
      }),
    );

  zones
    .command('get <zone>')
    .description('Show one zone (by id or name)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [zone]) => {
        const found = await resolveZone(ctx.client, zone as string);
        if (ctx.json) printJson(found);
        else printZone(found);
      }),
    );

  zones
    .command('delete <zone>')
    .description('Delete a zone (by id or name) and the load balancers in it')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [zone]) => {
        const found = await resolveZone(ctx.client, zone as string);
        const result = await deleteZone(ctx.client, found.id);
        if (ctx.json) printJson(result);
        else process.stdout.write(`Deleted zone ${found.name} (${result.id}) and its load balancers.\n`);
      }),
    );
}
