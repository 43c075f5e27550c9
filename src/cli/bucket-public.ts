import type { Command } from 'commander';
import {
  addCustomDomain,
  getManagedDomain,
  listCustomDomains,
  removeCustomDomain,
  setManagedDomain,
  type CustomDomainSummary,
  type ManagedDomainSummary,
} from '../client/index.ts';
import { handler } from './context.ts';
import { printJson, printTable } from './output.ts';
import { resolveZone } from './zones.ts';

/**
 * Public access to a bucket, as `wrangler r2 bucket dev-url enable|disable|get` and `wrangler r2 bucket
 * domain add|remove|list` spell it. The URLs printed are the ones that answer: Ledge's API says where
 * (`url`: plain HTTP on the traffic port); against Cloudflare it is https on the hostname.
 */
export function registerBucketPublic(bucket: Command): void {
  const devUrl = bucket.command('dev-url').description("A bucket's managed public URL (R2's r2.dev URL)");
  for (const [name, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    devUrl
      .command(`${name} <bucket>`)
      .description(`${enabled ? 'Serve' : 'Stop serving'} the bucket read-only at its public URL`)
      .option('--json', 'print JSON')
      .action(
        handler(async (ctx, [name]) => {
          const managed = await setManagedDomain(ctx.client, await ctx.accountId(), name as string, enabled);
          if (ctx.json) printJson(managed);
          else
            process.stdout.write(
              enabled
                ? `Public access to ${name as string} is on: ${publicUrl(managed)}\n`
                : `Public access to ${name as string} at ${publicUrl(managed)} is off.\n`,
            );
        }),
      );
  }
  devUrl
    .command('get <bucket>')
    .description('Whether the public URL is on, and the URL')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [name]) => {
        const managed = await getManagedDomain(ctx.client, await ctx.accountId(), name as string);
        if (ctx.json) printJson(managed);
        else process.stdout.write(`${publicUrl(managed)} (${managed.enabled ? 'enabled' : 'disabled'})\n`);
      }),
    );

  const domain = bucket.command('domain').description("A bucket's custom domains (names in the account's zones)");
  domain
    .command('add <bucket>')
    .description('Serve the bucket read-only at a hostname of one of your zones')
    .requiredOption('--domain <hostname>', 'the hostname, e.g. files.example.com')
    .requiredOption('--zone <zone>', 'the zone it belongs to, by name or id')
    .option('--min-tls <version>', 'minimum TLS version (1.0, 1.1, 1.2, 1.3)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [name]) => {
        const zone = await resolveZone(ctx.client, ctx.options['zone'] as string);
        const added = await addCustomDomain(ctx.client, await ctx.accountId(), name as string, {
          domain: ctx.options['domain'] as string,
          zoneId: zone.id,
          minTLS: ctx.options['minTls'] as string | undefined,
        });
        if (ctx.json) printJson(added);
        else process.stdout.write(`${name as string} is served at ${publicUrl(added)} (zone ${zone.name}).\n`);
      }),
    );
  domain
    .command('remove <bucket>')
    .description('Stop serving the bucket at a custom domain')
    .requiredOption('--domain <hostname>', 'the hostname')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [name]) => {
        const removed = await removeCustomDomain(
          ctx.client,
          await ctx.accountId(),
          name as string,
          ctx.options['domain'] as string,
        );
        if (ctx.json) printJson(removed);
        else process.stdout.write(`Removed ${removed.domain} from ${name as string}.\n`);
      }),
    );
  domain
    .command('list <bucket>')
    .description("The bucket's custom domains with their URLs")
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [name]) => {
        const all = await listCustomDomains(ctx.client, await ctx.accountId(), name as string);
        if (ctx.json) printJson(all);
        else
          printTable(
            all.map((d) => ({
              domain: d.domain,
              url: publicUrl(d),
              enabled: String(d.enabled),
              zone: d.zoneName ?? d.zoneId,
            })),
            ['domain', 'url', 'enabled', 'zone'],
            'No custom domains.',
          );
      }),
    );
}

/** Ledge's answer carries the URL; Cloudflare serves these names over HTTPS on the default port. */
function publicUrl(domain: ManagedDomainSummary | CustomDomainSummary): string {
  return domain.url ?? `https://${domain.domain}/`;
}
