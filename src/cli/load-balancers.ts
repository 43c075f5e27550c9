import { Option, type Command } from 'commander';
import {
  createLoadBalancer,
  deleteLoadBalancer,
  getLoadBalancer,
  listLoadBalancers,
  listPools,
  updateLoadBalancer,
  type ApiClient,
  type LoadBalancer,
} from '../client/index.ts';
import { handler, type CliContext } from './context.ts';
import { CliError, UsageError } from './errors.ts';
import { printJson, printTable } from './output.ts';
import { integer, readJsonBody } from './pools.ts';
import { resolveZone } from './zones.ts';

const STEERING = [
  'off',
  'random',
  'least_outstanding_requests',
  'least_connections',
  'geo',
  'dynamic_latency',
  'proximity',
];
const AFFINITY = ['none', 'cookie', 'ip_cookie', 'header'];
const POOL_ID = /^[0-9a-f]{32}$/;

/** Pool names or ids -> ids, in the order given (names are looked up once, among the account's pools). */
async function poolIds(api: ApiClient, accountId: string, given: string[]): Promise<string[]> {
  if (given.every((p) => POOL_ID.test(p))) return given;
  const pools = await listPools(api, accountId);
  return given.map((p) => {
    if (POOL_ID.test(p)) return p;
    const pool = pools.find((candidate) => candidate.name === p);
    if (!pool) throw new CliError(`no pool named "${p}" (see \`ledge pools list\`)`);
    return pool.id;
  });
}

async function lbFields(ctx: CliContext): Promise<Record<string, unknown>> {
  const o = ctx.options;
  const body = readJsonBody(o['file'] as string | undefined);
  if (o['name'] !== undefined) body['name'] = o['name'];
  if (o['description'] !== undefined) body['description'] = o['description'];
  const pools = o['pools'] as string | undefined;
  const fallback = o['fallbackPool'] as string | undefined;
  if (pools !== undefined || fallback !== undefined) {
    const accountId = await ctx.accountId();
    if (pools !== undefined)
      body['default_pools'] = await poolIds(
        ctx.client,
        accountId,
        pools
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean),
      );
    if (fallback !== undefined) body['fallback_pool'] = (await poolIds(ctx.client, accountId, [fallback]))[0];
  }
  if (o['steering'] !== undefined) body['steering_policy'] = o['steering'];
  if (o['sessionAffinity'] !== undefined) body['session_affinity'] = o['sessionAffinity'];
  if (o['sessionAffinityTtl'] !== undefined) body['session_affinity_ttl'] = o['sessionAffinityTtl'];
  const headers = o['affinityHeader'] as string[] | undefined;
  if (headers && headers.length > 0) body['session_affinity_attributes'] = { headers };
  if (o['ttl'] !== undefined) body['ttl'] = o['ttl'];
  if (o['proxied']) body['proxied'] = true;
  if (o['enabled']) body['enabled'] = true;
  if (o['disabled']) body['enabled'] = false;
  if (o['enabled'] && o['disabled']) throw new UsageError('--enabled and --disabled exclude each other');
  return body;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

function withLbOptions(command: Command): Command {
  return command
    .requiredOption('--zone <zone>', 'the zone (id or name)')
    .option('--description <text>', 'description')
    .option('--pools <list>', 'pools in failover order, comma-separated (names or ids)')
    .option('--fallback-pool <pool>', 'pool used when every pool is unhealthy (name or id)')
    .addOption(new Option('--steering <policy>', 'steering policy across pools').choices(STEERING))
    .addOption(new Option('--session-affinity <kind>', 'keep a client on its origin').choices(AFFINITY))
    .option('--session-affinity-ttl <seconds>', 'how long affinity lasts', integer('--session-affinity-ttl'))
    .option('--affinity-header <name>', 'header for --session-affinity header (repeat for several)', collect)
    .option('--ttl <seconds>', 'DNS TTL (stored; Ledge serves no DNS)', integer('--ttl'))
    .option('--proxied', 'mark the load balancer proxied')
    .option('--enabled', 'enable the load balancer')
    .option('--disabled', 'disable the load balancer')
    .option('--file <path>', 'JSON body with any load balancer fields (flags override it)')
    .option('--json', 'print JSON');
}

/** A load balancer by id or hostname within the zone. */
async function findLoadBalancer(api: ApiClient, zoneId: string, idOrName: string): Promise<LoadBalancer> {
  if (POOL_ID.test(idOrName)) return getLoadBalancer(api, zoneId, idOrName);
  const name = idOrName.toLowerCase().replace(/\.$/, '');
  const found = (await listLoadBalancers(api, zoneId)).find((lb) => lb.name === name);
  if (!found) throw new CliError(`no load balancer "${idOrName}" in this zone (see \`ledge lb list --zone ...\`)`);
  return found;
}

function printLoadBalancer(lb: LoadBalancer): void {
  process.stdout.write(`${lb.name} (${lb.id})${lb.enabled ? '' : ' [disabled]'}\n`);
  if (lb.description) process.stdout.write(`  ${lb.description}\n`);
  process.stdout.write(`  pools (failover order): ${lb.default_pools.join(', ')}\n`);
  process.stdout.write(`  fallback pool: ${lb.fallback_pool}\n`);
  process.stdout.write(`  steering: ${lb.steering_policy || '""'}  session affinity: ${lb.session_affinity}`);
  process.stdout.write(lb.session_affinity_ttl ? ` (ttl ${lb.session_affinity_ttl}s)\n` : '\n');
  process.stdout.write(`  proxied: ${lb.proxied ? 'yes' : 'no'}  ttl: ${lb.ttl}\n`);
}

function printNotices(messages: { message: string }[]): void {
  for (const m of messages) process.stderr.write(`Note: ${m.message}\n`);
}

export function registerLoadBalancers(program: Command): void {
  const lb = program.command('lb').description('Manage zone load balancers (a hostname steered to pools)');

  lb.command('list')
    .description('List the load balancers of a zone')
    .requiredOption('--zone <zone>', 'the zone (id or name)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const zone = await resolveZone(ctx.client, ctx.options['zone'] as string);
        const list = await listLoadBalancers(ctx.client, zone.id);
        if (ctx.json) return printJson(list);
        printTable(
          list.map((x) => ({
            Hostname: x.name,
            ID: x.id,
            Enabled: x.enabled ? 'yes' : 'no',
            Pools: x.default_pools.length,
            Steering: x.steering_policy || '""',
            Affinity: x.session_affinity,
          })),
          ['Hostname', 'ID', 'Enabled', 'Pools', 'Steering', 'Affinity'],
          'No load balancers.',
        );
      }),
    );

  lb.command('get <load-balancer>')
    .description('Show one load balancer (by id or hostname)')
    .requiredOption('--zone <zone>', 'the zone (id or name)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [id]) => {
        const zone = await resolveZone(ctx.client, ctx.options['zone'] as string);
        const found = await findLoadBalancer(ctx.client, zone.id, id as string);
        if (ctx.json) printJson(found);
        else printLoadBalancer(found);
      }),
    );

  withLbOptions(
    lb
      .command('create')
      .description('Create a load balancer: --name, --pools and --fallback-pool are needed (or in --file)'),
  )
    .option('--name <hostname>', 'the hostname it serves (the zone name or a name under it)')
    .action(
      handler(async (ctx) => {
        const zone = await resolveZone(ctx.client, ctx.options['zone'] as string);
        const body = await lbFields(ctx);
        for (const [field, flag] of [
          ['name', '--name'],
          ['default_pools', '--pools'],
          ['fallback_pool', '--fallback-pool'],
        ] as const)
          if (body[field] === undefined) throw new UsageError(`${flag} is required (or ${field} in --file)`);
        const { result, messages } = await createLoadBalancer(ctx.client, zone.id, body);
        if (ctx.json) return printJson(result);
        process.stdout.write(`Created load balancer ${result.name} (${result.id}).\n`);
        printNotices(messages);
      }),
    );

  withLbOptions(
    lb.command('update <load-balancer>').description('Change the given fields of a load balancer (by id or hostname)'),
  )
    .option('--name <hostname>', 'new hostname')
    .action(
      handler(async (ctx, [id]) => {
        const zone = await resolveZone(ctx.client, ctx.options['zone'] as string);
        const body = await lbFields(ctx);
        if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give at least one option');
        const found = await findLoadBalancer(ctx.client, zone.id, id as string);
        const { result, messages } = await updateLoadBalancer(ctx.client, zone.id, found.id, body);
        if (ctx.json) return printJson(result);
        process.stdout.write(`Updated load balancer ${result.name} (${result.id}).\n`);
        printNotices(messages);
      }),
    );

  lb.command('delete <load-balancer>')
    .description('Delete a load balancer (by id or hostname)')
    .requiredOption('--zone <zone>', 'the zone (id or name)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [id]) => {
        const zone = await resolveZone(ctx.client, ctx.options['zone'] as string);
        const found = await findLoadBalancer(ctx.client, zone.id, id as string);
        const result = await deleteLoadBalancer(ctx.client, zone.id, found.id);
        if (ctx.json) printJson(result);
        else process.stdout.write(`Deleted load balancer ${found.name} (${result.id}).\n`);
      }),
    );
}
