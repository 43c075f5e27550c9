import type { Command } from 'commander';
import { registerSilences } from './silences.ts';
import {
  createPolicy,
  createWebhook,
  deletePolicy,
  deleteWebhook,
  getPolicy,
  listHistory,
  listPolicies,
  listWebhooks,
  updatePolicy,
  type NotificationPolicy,
  type NotificationPolicyInput,
} from '../client/index.ts';
import { handler, type Options } from './context.ts';
import { UsageError } from './errors.ts';
import { printJson, printTable } from './output.ts';

const HEALTH_ALERT = 'load_balancing_health_alert';

/** Policy fields from flags; only the flags given appear, so `update` changes just those. */
function policyFields(o: Options): Partial<NotificationPolicyInput> {
  const list = (name: string) => o[name] as string[] | undefined;
  const fields: Partial<NotificationPolicyInput> = {};
  if (o['name'] !== undefined) fields.name = o['name'] as string;
  if (o['description'] !== undefined) fields.description = o['description'] as string;
  // The server checks the name against the alert types it knows.
  if (o['alertType'] !== undefined) fields.alert_type = o['alertType'] as NotificationPolicyInput['alert_type'];
  if (o['alertInterval'] !== undefined) fields.alert_interval = o['alertInterval'] as string;
  if (o['enable'] && o['disable']) throw new UsageError('use --enable or --disable, not both');
  if (o['enable']) fields.enabled = true;
  if (o['disable']) fields.enabled = false;
  const filters: Record<string, string[]> = {};
  if (list('pool')) filters['pool_id'] = list('pool')!;
  if (list('newHealth')) filters['new_health'] = list('newHealth')!;
  if (list('eventSource')) filters['event_source'] = list('eventSource')!;
  if (list('poolEnabled')) filters['enabled'] = list('poolEnabled')!;
  if (Object.keys(filters).length > 0) fields.filters = filters;
  if (list('webhook') || list('mailTo')) {
    fields.mechanisms = {
      ...(list('webhook') ? { webhooks: list('webhook')!.map((id) => ({ id })) } : {}),
      ...(list('mailTo') ? { email: list('mailTo')!.map((id) => ({ id })) } : {}),
    };
  }
  return fields;
}

function withPolicyFlags(command: Command): Command {
  return command
    .option('--name <name>', 'policy name')
    .option('--description <text>', 'description')
    .option('--alert-type <type>', `alert type (default ${HEALTH_ALERT} on create)`)
    .option('--pool <id...>', 'filter: pool ids (default: all pools)')
    .option('--new-health <value...>', 'filter: Healthy and/or Unhealthy (default: both)')
    .option('--event-source <value...>', 'filter: pool and/or origin (default: both)')
    .option(
      '--pool-enabled <value...>',
      'filter for load_balancing_pool_enablement_alert: true (enabled) and/or false (disabled) (default: both)',
    )
    .option('--webhook <id...>', 'deliver to these webhook destinations')
    .option('--mail-to <address...>', 'deliver by email to these addresses')
    .option('--alert-interval <duration>', 'do not repeat the same alert within this interval, e.g. 30m')
    .option('--enable', 'enable the policy')
    .option('--disable', 'disable the policy')
    .option('--json', 'print JSON');
}

function policyRow(p: NotificationPolicy) {
  const targets = [
    ...(p.mechanisms.webhooks ?? []).map((w) => `webhook:${w.id}`),
    ...(p.mechanisms.email ?? []).map((e) => e.id),
  ];
  const filters = Object.entries(p.filters).map(([key, values]) => `${key}=${values.join(',')}`);
  return {
    ID: p.id,
    Name: p.name,
    Enabled: p.enabled,
    Type: p.alert_type,
    Filters: filters.join(' '),
    Delivers: targets.join(' '),
  };
}

/** `ledge notifications policies|webhooks|history`: account-level alerting (the replacement of notification_email). */
export function registerNotifications(program: Command): void {
  const notifications = program
    .command('notifications')
    .description('Manage alert policies, webhook destinations and delivery history');

  const policies = notifications.command('policies').description('Alert policies');
  registerSilences(notifications);
  policies
    .command('list')
    .description('List the policies of the account')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const list = await listPolicies(ctx.client, await ctx.accountId());
        if (ctx.json) printJson(list);
        else
          printTable(
            list.map(policyRow),
            ['ID', 'Name', 'Enabled', 'Type', 'Filters', 'Delivers'],
            'No notification policies.',
          );
      }),
    );
  policies
    .command('get <id>')
    .description('Show one policy')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [id]) => {
        const policy = await getPolicy(ctx.client, await ctx.accountId(), id as string);
        printJson(policy);
      }),
    );
  withPolicyFlags(policies.command('create').description('Create a policy (enabled unless --disable)')).action(
    handler(async (ctx) => {
      const fields = policyFields(ctx.options);
      if (!fields.name) throw new UsageError('--name is required');
      if (!fields.mechanisms) throw new UsageError('give at least one --webhook or --mail-to');
      const input: NotificationPolicyInput = {
        alert_type: HEALTH_ALERT,
        enabled: true,
        filters: {},
        ...fields,
        name: fields.name,
        mechanisms: fields.mechanisms,
      };
      const id = await createPolicy(ctx.client, await ctx.accountId(), input);
      if (ctx.json) printJson({ id });
      else process.stdout.write(`Created notification policy ${input.name} (${id}).\n`);
    }),
  );
  withPolicyFlags(policies.command('update <id>').description('Change the given fields of a policy')).action(
    handler(async (ctx, [id]) => {
      const fields = policyFields(ctx.options);
      if (Object.keys(fields).length === 0) throw new UsageError('nothing to change: give at least one option');
      await updatePolicy(ctx.client, await ctx.accountId(), id as string, fields);
      if (ctx.json) printJson({ id });
      else process.stdout.write(`Updated notification policy ${id as string}.\n`);
    }),
  );
  policies
    .command('delete <id>')
    .description('Delete a policy')
    .action(
      handler(async (ctx, [id]) => {
        await deletePolicy(ctx.client, await ctx.accountId(), id as string);
        process.stdout.write(`Deleted notification policy ${id as string}.\n`);
      }),
    );

  const webhooks = notifications.command('webhooks').description('Webhook destinations');
  webhooks
    .command('list')
    .description('List webhook destinations (secrets are never shown)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const list = await listWebhooks(ctx.client, await ctx.accountId());
        if (ctx.json) printJson(list);
        else
          printTable(
            list.map((w) => ({
              ID: w.id,
              Name: w.name,
              Type: w.type,
              URL: w.url,
              'Last success': w.last_success,
              'Last failure': w.last_failure,
            })),
            ['ID', 'Name', 'Type', 'URL', 'Last success', 'Last failure'],
            'No webhook destinations.',
          );
      }),
    );
  webhooks
    .command('create')
    .description('Create a webhook destination (a test message is sent; a non-2xx answer refuses it)')
    .requiredOption('--name <name>', 'destination name')
    .requiredOption('--url <url>', 'URL that receives the POSTs')
    .option('--secret <secret>', 'sent in the cf-webhook-auth header (env LEDGE_WEBHOOK_SECRET)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const secret = (ctx.options['secret'] as string | undefined) ?? process.env['LEDGE_WEBHOOK_SECRET'];
        const input = {
          name: ctx.options['name'] as string,
          url: ctx.options['url'] as string,
          ...(secret ? { secret } : {}),
        };
        const id = await createWebhook(ctx.client, await ctx.accountId(), input);
        if (ctx.json) printJson({ id });
        else process.stdout.write(`Created webhook destination ${input.name} (${id}).\n`);
      }),
    );
  webhooks
    .command('delete <id>')
    .description('Delete a webhook destination')
    .action(
      handler(async (ctx, [id]) => {
        await deleteWebhook(ctx.client, await ctx.accountId(), id as string);
        process.stdout.write(`Deleted webhook destination ${id as string}.\n`);
      }),
    );

  notifications
    .command('history')
    .description('Delivery attempts, newest first')
    .option('--since <time>', 'only attempts at or after this RFC 3339 time')
    .option('--before <time>', 'only attempts before this RFC 3339 time')
    .option('--page <n>', 'page number', '1')
    .option('--per-page <n>', 'attempts per page (5-1000)', '25')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const o = ctx.options as Record<string, string | undefined>;
        const { items, totalCount } = await listHistory(ctx.client, await ctx.accountId(), {
          page: Number(o['page']),
          per_page: Number(o['perPage']),
          ...(o['since'] ? { since: o['since'] } : {}),
          ...(o['before'] ? { before: o['before'] } : {}),
        });
        if (ctx.json) {
          printJson({ items, total_count: totalCount });
          return;
        }
        printTable(
          items.map((h) => ({
            Sent: h.sent,
            Status: h.status,
            Type: h.mechanism_type,
            To: h.mechanism,
            Policy: h.name,
            Alert: h.description,
          })),
          ['Sent', 'Status', 'Type', 'To', 'Policy', 'Alert'],
          'No deliveries yet.',
        );
        if (items.length > 0) process.stdout.write(`(${items.length} of ${totalCount})\n`);
      }),
    );
}
