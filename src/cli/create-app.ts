import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { getAccountSubdomain } from '../client/index.ts';
import { handler, type CliContext } from './context.ts';
import { serverEndpoints } from './endpoints.ts';
import { CliError, UsageError } from './errors.ts';
import { printJson } from './output.ts';
import { isoNow } from '../shared/time.ts';

const LEDGE_ROOT = resolve(import.meta.dirname, '../..');
/** The starters `--template` picks: the R2 tutorial function, or a static site (docs/assets.md). */
const TEMPLATES: Record<string, string> = {
  r2: join(LEDGE_ROOT, 'templates/app'),
  static: join(LEDGE_ROOT, 'templates/static'),
};
const SCRIPT_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const BUCKET_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;
/** npm never publishes a file named .gitignore, so templates carry it as `gitignore`. */
const RENAMES: Record<string, string> = { gitignore: '.gitignore' };

export function registerCreate(program: Command): void {
  const create = program.command('create').description('Scaffold projects');
  create
    .command('app <dir>')
    .description(
      'Create a project: the R2 tutorial function in TypeScript with a test (--template r2), or a static site (--template static)',
    )
    .option('--template <kind>', 'r2 (a function bound to a bucket) or static (a site of static files)', 'r2')
    .option('--name <name>', 'script name (default: the directory name)')
    .option('--bucket <bucket>', 'R2 bucket bound as MY_BUCKET', 'my-bucket')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [dirArg]) => {
        const dir = resolve(String(dirArg));
        const name = (ctx.options['name'] as string | undefined) ?? basename(dir).toLowerCase();
        const bucket = String(ctx.options['bucket']);
        const template = String(ctx.options['template']);
        const templateDir = TEMPLATES[template];
        if (!templateDir)
          throw new UsageError(`unknown template "${template}": use ${Object.keys(TEMPLATES).join(' or ')}`);
        if (!SCRIPT_NAME.test(name)) {
          throw new UsageError(
            `"${name}" is not a valid function name (lowercase letters, digits, dashes; use --name)`,
          );
        }
        if (!BUCKET_NAME.test(bucket))
          throw new UsageError(`"${bucket}" is not a valid bucket name (3-63 lowercase letters, digits, dashes)`);
        if (existsSync(dir) && readdirSync(dir).length > 0) throw new CliError(`${dir} exists and is not empty`);
        const accountId = await ctx.accountId();
        const values: Record<string, string> = {
          name,
          bucket_name: bucket,
          account_id: accountId,
          compatibility_date: isoNow(ctx.clock).slice(0, 10),
          // For the README's wrangler steps: the API to point it at, and the checkout whose node_modules
          // hold Node 24 and wrangler 4 (wrangler needs Node 22.12+, which the machine's may not be).
          api_url: ctx.connection.apiUrl,
          ledge_root: LEDGE_ROOT,
          ...(await functionUrlValues(ctx, accountId, name)),
        };
        const written = copyTemplate(templateDir, dir, values);
        if (ctx.json) {
          printJson({ dir, name, template, bucket, account_id: accountId, files: written });
          return;
        }
        process.stdout.write(`Created ${name} in ${dir}:\n${written.map((f) => `  ${f}`).join('\n')}\n\n`);
        process.stdout.write(`Next:\n  cd ${relative(process.cwd(), dir) || '.'}\n  ledge deploy\n`);
      }),
    );
}

/** Copies the template tree, filling `{{key}}` placeholders; returns the relative paths written. */
function copyTemplate(from: string, to: string, values: Record<string, string>, prefix = ''): string[] {
  mkdirSync(to, { recursive: true });
  const written: string[] = [];
  for (const entry of readdirSync(from).sort()) {
    const source = join(from, entry);
    const targetName = RENAMES[entry] ?? entry;
    if (statSync(source).isDirectory()) {
      written.push(...copyTemplate(source, join(to, targetName), values, `${prefix}${targetName}/`));
      continue;
    }
    const text = readFileSync(source, 'utf8').replace(/\{\{(\w+)\}\}/g, (whole, key: string) => values[key] ?? whole);
    writeFileSync(join(to, targetName), text);
    written.push(`${prefix}${targetName}`);
  }
  return written;
}

/**
 * The README's `<url>`: the URL the function will answer at on the server the CLI talks to (its functions
 * domain and port as it registered them, the account's subdomain), or a description where it is not known.
 */
async function functionUrlValues(ctx: CliContext, accountId: string, name: string): Promise<Record<string, string>> {
  const subdomain = await getAccountSubdomain(ctx.client, accountId).catch(() => undefined);
  const url = subdomain ? serverEndpoints(ctx.connection.apiUrl).functionUrl(name, subdomain) : undefined;
  if (url) return { function_url: url, function_url_note: `(\`ledge deploy\` prints it too)` };
  return {
    function_url: '<url>',
    function_url_note: `(what \`ledge deploy\` prints: \`http://${name}.<subdomain>.<functions domain>:<functions port>\`, by default \`http://${name}.<subdomain>.localhost:8788\`)`,
  };
}
