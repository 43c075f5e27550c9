import type { Command } from 'commander';
import { createMonitor, deleteMonitor, getMonitor, listMonitors, updateMonitor } from '../client/index.ts';
import { handler } from './context.ts';
import { UsageError } from './errors.ts';
import { printJson, printTable } from './output.ts';
import { integer, readJsonBody } from './pools.ts';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `--header "Host: example.com"` (repeatable; the same name twice gives several values). */
function parseHeaders(specs: string[]): Record<string, string[]> {
  const headers: Record<string, string[]> = {};
  for (const spec of specs) {
    const at = spec.indexOf(':');
    if (at <= 0) throw new UsageError(`--header must look like "Name: value", got "${spec}"`);
    const name = spec.slice(0, at).trim();
    (headers[name] ??= []).push(spec.slice(at + 1).trim());
  }
  return headers;
}

const FLAG_FIELDS: [option: string, field: string][] = [
  ['type', 'type'],
  ['description', 'description'],
  ['method', 'method'],
  ['path', 'path'],
  ['port', 'port'],
  ['timeout', 'timeout'],
  ['retries', 'retries'],
  ['interval', 'interval'],
  ['expectedCodes', 'expected_codes'],
  ['expectedBody', 'expected_body'],
  ['consecutiveUp', 'consecutive_up'],
  ['consecutiveDown', 'consecutive_down'],
  ['probeZone', 'probe_zone'],
];

function monitorFields(o: Record<string, unknown>): Record<string, unknown> {
  const body = readJsonBody(o['file'] as string | undefined);
  for (const [option, field] of FLAG_FIELDS) if (o[option] !== undefined) body[field] = o[option];
  const headers = o['header'] as string[] | undefined;
  if (headers && headers.length > 0) body['header'] = parseHeaders(headers);
  if (o['followRedirects'] !== undefined) body['follow_redirects'] = o['followRedirects'];
  if (o['allowInsecure'] !== undefined) body['allow_insecure'] = o['allowInsecure'];
  return body;
}

function withMonitorOptions(command: Command): Command {
  return command
    .option('--type <type>', 'http, https, tcp, smtp, udp_icmp or icmp_ping')
    .option('--description <text>', 'description')
    .option('--method <method>', 'HTTP method (GET), or connection_established for tcp')
    .option('--path <path>', 'HTTP path (/)')
    .option('--header <"Name: value">', 'request header (repeatable)', collect)
    .option('--port <port>', 'port (0 = the origin port or the protocol default)', integer('--port'))
    .option('--timeout <seconds>', 'timeout per attempt (5)', integer('--timeout'))
    .option('--retries <n>', 'immediate retries of a failed attempt (2)', integer('--retries'))
    .option('--interval <seconds>', 'seconds between checks (60)', integer('--interval'))
    .option('--expected-codes <codes>', '"200", "2xx" or "200,301"')
    .option('--expected-body <text>', 'case-insensitive text the first 10 KB must contain')
    .option('--follow-redirects', 'follow redirects')
    .option('--no-follow-redirects', 'do not follow redirects')
    .option('--allow-insecure', 'accept any TLS certificate')
    .option('--no-allow-insecure', 'verify TLS certificates')
    .option('--consecutive-up <n>', 'successes needed to become healthy', integer('--consecutive-up'))
    .option('--consecutive-down <n>', 'failures needed to become unhealthy', integer('--consecutive-down'))
    .option('--probe-zone <zone>', 'probe zone')
    .option('--file <path>', 'JSON body with any monitor fields (flags override it)')
    .option('--json', 'print JSON');
}

export function registerMonitors(program: Command): void {
  const monitors = program.command('monitors').description('Manage load-balancing health monitors');

  monitors
    .command('list')
    .description('List monitors')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const list = await listMonitors(ctx.client, await ctx.accountId());
        if (ctx.json) return printJson(list);
        printTable(
          list.map((m) => ({
            ID: m.id,
            Type: m.type,
            Check: m.type.startsWith('http') ? `${m.method} ${m.path} -> ${m.expected_codes}` : m.method,
            Interval: `${m.interval}s`,
            Description: m.description,
          })),
          ['ID', 'Type', 'Check', 'Interval', 'Description'],
          'No monitors.',
        );
      }),
    );

  monitors
    .command('get <monitor-id>')
    .description('Show one monitor')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [id]) => {
        const monitor = await getMonitor(ctx.client, await ctx.accountId(), id as string);
        if (ctx.json) return printJson(monitor);
        for (const [field, value] of Object.entries(monitor))
          process.stdout.write(`${field}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}\n`);
      }),
    );

  withMonitorOptions(
    monitors.command('create').description('Create a monitor (defaults: http GET / every 60 s)'),
  ).action(
    handler(async (ctx) => {
      const monitor = await createMonitor(ctx.client, await ctx.accountId(), monitorFields(ctx.options));
      if (ctx.json) printJson(monitor);
      else process.stdout.write(`Created monitor ${monitor.id} (${monitor.type}).\n`);
    }),
  );

  withMonitorOptions(
    monitors.command('update <monitor-id>').description('Change the given fields of a monitor'),
  ).action(
    handler(async (ctx, [id]) => {
      const body = monitorFields(ctx.options);
      if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give at least one option');
      const monitor = await updateMonitor(ctx.client, await ctx.accountId(), id as string, body);
      if (ctx.json) printJson(monitor);
      else process.stdout.write(`Updated monitor ${monitor.id}.\n`);
    }),
  );

  monitors
    .command('delete <monitor-id>')
    .description('Delete a monitor (refused while pools use it)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [id]) => {
        const result = await deleteMonitor(ctx.client, await ctx.accountId(), id as string);
        if (ctx.json) printJson(result);
        else process.stdout.write(`Deleted monitor ${result.id}.\n`);
      }),
    );
}
