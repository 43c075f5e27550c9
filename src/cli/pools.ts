import { readFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import {
  createPool,
  deletePool,
  getMonitor,
  getPool,
  getPoolHealth,
  getPoolReferences,
  listPools,
  updatePool,
  type ApiClient,
  type Pool,
} from '../client/index.ts';
import { handler } from './context.ts';
import { CliError, UsageError } from './errors.ts';
import { printJson, printTable } from './output.ts';

/** `--file body.json` (or `-` for stdin): a full request body for fields the flags do not cover. */
export function readJsonBody(path: string | undefined): Record<string, unknown> {
  if (path === undefined) return {};
  const text = readFileSync(path === '-' ? 0 : path, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CliError(`${path} must hold a JSON object`);
  return value as Record<string, unknown>;
}

export function integer(name: string) {
  return (raw: string): number => {
    if (!/^-?\d+$/.test(raw)) throw new InvalidArgumentError(`${name} must be an integer, got "${raw}"`);
    return Number(raw);
  };
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `name=address` or `name=address:port` (IPv6 in brackets: `web=[2001:db8::1]:8080`). */
export function parseOrigin(spec: string): { name: string; address: string; port?: number } {
  const match = /^([^=]+)=(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(spec);
  if (!match) throw new UsageError(`--origin must look like name=address or name=address:port, got "${spec}"`);
  const origin: { name: string; address: string; port?: number } = {
    name: match[1]!,
    address: match[2]!.replace(/^\[|\]$/g, ''),
  };
  if (match[3] !== undefined) origin.port = Number(match[3]);
  return origin;
}

function poolFields(o: Record<string, unknown>): Record<string, unknown> {
  const body = readJsonBody(o['file'] as string | undefined);
  if (o['name'] !== undefined) body['name'] = o['name'];
  if (o['description'] !== undefined) body['description'] = o['description'];
  if (o['monitor'] !== undefined) body['monitor'] = o['monitor'] === '' ? null : o['monitor'];
  if (o['minimumOrigins'] !== undefined) body['minimum_origins'] = o['minimumOrigins'];
  if (o['notificationEmail'] !== undefined) body['notification_email'] = o['notificationEmail'];
  if (o['enable']) body['enabled'] = true;
  if (o['disable']) body['enabled'] = false;
  const origins = o['origin'] as string[] | undefined;
  if (origins && origins.length > 0) body['origins'] = origins.map(parseOrigin);
  return body;
}

function withPoolOptions(command: Command): Command {
  return command
    .option('--description <text>', 'description')
    .option('--origin <name=address[:port]>', 'an origin (repeat for several)', collect)
    .option('--monitor <id>', 'monitor id ("" removes it)')
    .option('--minimum-origins <n>', 'healthy origins needed for a healthy pool', integer('--minimum-origins'))
    .option('--notification-email <list>', 'legacy notification emails, comma-separated (deprecated)')
    .option('--enable', 'enable the pool')
    .option('--disable', 'disable the pool')
    .option('--file <path>', 'JSON body with any pool fields (flags override it)')
    .option('--json', 'print JSON');
}

function printPool(pool: Pool): void {
  process.stdout.write(`${pool.name} (${pool.id})${pool.enabled ? '' : ' [disabled]'}\n`);
  if (pool.description) process.stdout.write(`  ${pool.description}\n`);
  process.stdout.write(`  monitor: ${pool.monitor ?? 'none'}  minimum origins: ${pool.minimum_origins}\n`);
  if (pool.notification_email) process.stdout.write(`  notification_email (deprecated): ${pool.notification_email}\n`);
  printTable(
    pool.origins.map((o) => ({
      Origin: o.name,
      Address: o.address,
      Port: o.port || '',
      Weight: o.weight,
      Enabled: o.enabled ? 'yes' : 'no',
    })),
    ['Origin', 'Address', 'Port', 'Weight', 'Enabled'],
  );
}

export function registerPools(program: Command): void {
  const pools = program.command('pools').description('Manage load-balancing pools');

  pools
    .command('list')
    .description('List pools (every page), ordered by name')
    .option('--monitor <id>', 'only pools that use this monitor')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const list = await listPools(ctx.client, await ctx.accountId(), {
          monitor: ctx.options['monitor'] as string | undefined,
        });
        if (ctx.json) return printJson(list);
        const accountId = await ctx.accountId();
        const health = await mapLimit(list, 4, (p) => poolHealthWord(ctx.client, accountId, p.id));
        printTable(
          list.map((p, index) => ({
            Name: p.name,
            ID: p.id,
            Enabled: p.enabled ? 'yes' : 'no',
            Health: health[index],
            Origins: p.origins.length,
            Monitor: p.monitor ?? '',
            'Notification email': p.notification_email,
          })),
          ['Name', 'ID', 'Enabled', 'Health', 'Origins', 'Monitor', 'Notification email'],
          'No pools.',
        );
      }),
    );

  pools
    .command('get <pool-id>')
    .description('Show one pool')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [id]) => {
        const pool = await getPool(ctx.client, await ctx.accountId(), id as string);
        if (ctx.json) printJson(pool);
        else printPool(pool);
      }),
    );

  withPoolOptions(
    pools.command('create <name>').description('Create a pool (at least one --origin, or origins in --file)'),
  ).action(
    handler(async (ctx, [name]) => {
      const body: Record<string, unknown> = { ...poolFields(ctx.options), name };
      if (ctx.options['enable'] && ctx.options['disable'])
        throw new UsageError('--enable and --disable exclude each other');
      if (!Array.isArray(body['origins']))
        throw new UsageError(
          'a pool needs its origins: give at least one --origin name=address[:port] (or "origins" in --file)',
        );
      const pool = await createPool(ctx.client, await ctx.accountId(), body);
      if (ctx.json) printJson(pool);
      else process.stdout.write(`Created pool ${pool.name} (${pool.id}).\n`);
    }),
  );

  withPoolOptions(
    pools.command('update <pool-id>').description('Change the given fields of a pool (--origin replaces all origins)'),
  )
    .option('--name <name>', 'new name')
    .action(
      handler(async (ctx, [id]) => {
        if (ctx.options['enable'] && ctx.options['disable'])
          throw new UsageError('--enable and --disable exclude each other');
        const body = poolFields(ctx.options);
        if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give at least one option');
        const pool = await updatePool(ctx.client, await ctx.accountId(), id as string, body);
        if (ctx.json) printJson(pool);
        else process.stdout.write(`Updated pool ${pool.name} (${pool.id}).\n`);
      }),
    );

  pools
    .command('delete <pool-id>')
    .description('Delete a pool')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [id]) => {
        const result = await deletePool(ctx.client, await ctx.accountId(), id as string);
        if (ctx.json) printJson(result);
        else process.stdout.write(`Deleted pool ${result.id}.\n`);
      }),
    );

  pools
    .command('health <pool-id>')
    .description('Show the health of a pool and its origins as the checker last saw them')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [id]) => {
        const accountId = await ctx.accountId();
        const view = await getPoolHealth(ctx.client, accountId, id as string);
        const loadBalancers = (await getPoolReferences(ctx.client, accountId, id as string))
          .filter((r) => r.reference_type === 'referrer' && r.resource_type === 'load_balancer')
          .map((r) => ({ id: r.resource_id, name: r.resource_name }));
        if (ctx.json) return printJson({ ...view, load_balancers: loadBalancers });
        process.stdout.write(
          loadBalancers.length === 0
            ? 'Used by no load balancer.\n'
            : `Used by load balancers: ${loadBalancers.map((lb) => `${lb.name} (${lb.id})`).join(', ')}\n`,
        );
        const regions = Object.entries(view.pop_health);
        if (regions.length === 0) {
          process.stdout.write('This pool is not health-checked (disabled, no monitor, or an ICMP monitor).\n');
          return;
        }
        // The health view lists the enabled origins in the pool's order, keyed by address only: the pool
        // gives each its name and port (0 = the monitor's port, or the scheme's default).
        const pool = await getPool(ctx.client, accountId, id as string);
        const monitor = pool.monitor ? await getMonitor(ctx.client, accountId, pool.monitor) : undefined;
        const monitorPort = Number(monitor?.['port'] ?? 0) || (monitor?.type === 'https' ? 443 : 80);
        const enabled = pool.origins.filter((o) => o.enabled);
        for (const [region, entry] of regions) {
          process.stdout.write(`Pool ${entry.healthy ? 'Healthy' : 'Unhealthy'} (region ${region})\n`);
          const rows = entry.origins.flatMap((o, index) =>
            Object.entries(o).map(([address, h]) => ({
              Origin: enabled[index]?.name ?? '',
              Address: address,
              Port: enabled[index]?.port || monitorPort,
              Health: h.healthy ? 'Healthy' : 'Unhealthy',
              RTT: h.rtt ?? '',
              Code: h.response_code ?? '',
              Reason: h.failure_reason,
            })),
          );
          printTable(rows, ['Origin', 'Address', 'Port', 'Health', 'RTT', 'Code', 'Reason'], 'No enabled origins.');
        }
      }),
    );
}

/**
 * One word for a pool's health as the checker last saw it: healthy, unhealthy, or unchecked (disabled, no
 * monitor: the health view has no region), or unknown when the view could not be read.
 */
async function poolHealthWord(api: ApiClient, accountId: string, id: string): Promise<string> {
  try {
    const regions = Object.values((await getPoolHealth(api, accountId, id)).pop_health);
    if (regions.length === 0) return 'unchecked';
    return regions.every((region) => region.healthy) ? 'healthy' : 'unhealthy';
  } catch {
    return 'unknown';
  }
}

/** `fn` over `items`, at most `limit` at a time, results in order. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
