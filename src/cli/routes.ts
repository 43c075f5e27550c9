import type { Command } from 'commander';
import { listWorkerDomains, listZoneRoutes, listZones } from '../client/index.ts';
import { handler } from './context.ts';
import { printJson, printTable } from './output.ts';
import { resolveZone } from './zones.ts';

/**
 * `ledge routes`: where the account's Workers answer on the traffic port: the Workers routes of its zones (or
 * of one) and its Custom Domains. They are made with `wrangler deploy` (`routes = [...]`) or the API.
 */
export function registerRoutes(program: Command): void {
  program
    .command('routes')
    .description("list the account's Workers routes and Custom Domains (what each hostname and path serves)")
    .option('--zone <zone>', 'only this zone (by id or name)')
    .option('--script <name>', 'only this script')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const accountId = await ctx.accountId();
        const only = ctx.options['zone'] as string | undefined;
        const script = ctx.options['script'] as string | undefined;
        const zones = only ? [await resolveZone(ctx.client, only)] : await listZones(ctx.client, { accountId });
        const routes = [];
        for (const zone of zones)
          for (const route of await listZoneRoutes(ctx.client, zone.id))
            if (!script || route.script === script) routes.push({ ...route, zone_name: zone.name });
        const zoneIds = new Set(zones.map((z) => z.id));
        const domains = (await listWorkerDomains(ctx.client, accountId, script)).filter((d) => zoneIds.has(d.zone_id));
        if (ctx.json) return printJson({ routes, domains });
        printTable(
          [
            ...routes.map((r) => ({
              Pattern: r.pattern,
              Worker: r.script ?? '(none)',
              Kind: 'route',
              Zone: r.zone_name,
            })),
            ...domains.map((d) => ({
              Pattern: d.hostname,
              Worker: d.service,
              Kind: 'custom domain',
              Zone: d.zone_name,
            })),
          ],
          ['Pattern', 'Worker', 'Kind', 'Zone'],
          'No Workers routes or Custom Domains.',
        );
      }),
    );
}
