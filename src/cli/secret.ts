import type { Command } from 'commander';
import { ApiError, deleteSecret, listSecrets, putSecret, uploadScript } from '../client/index.ts';
import { handler, type CliContext } from './context.ts';
import { projectAccountId, readProjectConfig, type ProjectConfig } from './deploy.ts';
import { CliError, UsageError } from './errors.ts';
import { printJson, printTable } from './output.ts';
import { confirm, promptHidden } from './prompt.ts';

/** Cloudflare's codes for "no such Worker" (script, and legacy environment), as wrangler checks them. */
const WORKER_NOT_FOUND = [10007, 10090];

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The script a secret command acts on: --name, else `name` of the project in the current directory. */
async function target(ctx: CliContext): Promise<{ script: string; accountId: string }> {
  const explicit = ctx.options['name'] as string | undefined;
  let config: ProjectConfig | undefined;
  if (!explicit) config = await readProjectConfig(process.cwd());
  const script = explicit ?? config!.name;
  return { script, accountId: await projectAccountId(ctx, config) };
}

/** Reads the value: a hidden prompt on a terminal, all of stdin (one trailing newline dropped) otherwise. */
async function readSecretValue(name: string, script: string): Promise<string> {
  if (process.stdin.isTTY) {
    const value = await promptHidden(
      `Enter the secret text you'd like assigned to the variable ${name} on the script named ${script}: `,
    );
    process.stderr.write('\n');
    return value;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** What a Worker created by `secret put` runs until the first deploy replaces it (as wrangler's draft). */
const PLACEHOLDER = `export default {
  fetch() {
    return new Response('This function has secrets but no code yet: deploy it with \`ledge deploy\`.', { status: 503 });
  },
};
`;

/**
 * Stores a secret; when the Worker does not exist yet, creates it first with a placeholder (asking on a
 * terminal, proceeding otherwise), as \`wrangler secret put\` does, so the spec's order (secret, then the
 * first deploy) works. The placeholder is not routed: deploy turns the route on.
 */
async function putSecretCreatingWorker(
  ctx: CliContext,
  accountId: string,
  script: string,
  name: string,
  value: string,
): Promise<'stored' | 'created' | 'aborted'> {
  try {
    await putSecret(ctx.client, accountId, script, name, value);
    return 'stored';
  } catch (error) {
    if (!(error instanceof ApiError) || !WORKER_NOT_FOUND.includes(error.code)) throw error;
  }
  const create = await confirm(
    `There is no Worker called "${script}" yet. Create it (with a placeholder until \`ledge deploy\`) and add the secret?`,
    true,
  );
  if (!create) return 'aborted';
  await uploadScript(ctx.client, accountId, script, {
    mainModule: 'index.js',
    modules: [{ name: 'index.js', content: PLACEHOLDER }],
    bindings: [],
  });
  await putSecret(ctx.client, accountId, script, name, value);
  return 'created';
}

export function registerSecret(program: Command): void {
  const secret = program
    .command('secret')
    .description("Manage a function's secrets (encrypted at rest, never shown again)");
  secret
    .command('put <secret-name>')
    .description('Create or replace a secret (prompted without echo, or read from stdin when piped)')
    .option('--name <script>', 'script name (default: `name` from wrangler.toml)')
    .action(
      handler(async (ctx, [secretName]) => {
        const name = String(secretName);
        if (!IDENTIFIER.test(name)) throw new UsageError(`secret name "${name}" is not a valid JavaScript identifier`);
        const { script, accountId } = await target(ctx);
        const value = await readSecretValue(name, script);
        if (value === '') throw new CliError('the secret value is empty');
        const outcome = await putSecretCreatingWorker(ctx, accountId, script, name, value);
        if (outcome === 'aborted') throw new CliError(`no secret added: there is no Worker called "${script}"`);
        if (outcome === 'created')
          process.stdout.write(`Created the Worker ${script} (deploy it with \`ledge deploy\`).\n`);
        process.stdout.write(`Success! Uploaded secret ${name} for ${script}.\n`);
      }),
    );
  secret
    .command('list')
    .description("List the names of a script's secrets")
    .option('--name <script>', 'script name (default: `name` from wrangler.toml)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const { script, accountId } = await target(ctx);
        const secrets = await listSecrets(ctx.client, accountId, script);
        if (ctx.json) printJson(secrets);
        else
          printTable(
            secrets.map((s) => ({ Name: s.name, Type: s.type })),
            ['Name', 'Type'],
            `No secrets on ${script}.`,
          );
      }),
    );
  secret
    .command('delete <secret-name>')
    .description('Delete a secret')
    .option('--name <script>', 'script name (default: `name` from wrangler.toml)')
    .action(
      handler(async (ctx, [secretName]) => {
        const { script, accountId } = await target(ctx);
        await deleteSecret(ctx.client, accountId, script, String(secretName));
        process.stdout.write(`Deleted secret ${String(secretName)} from ${script}.\n`);
      }),
    );
}
