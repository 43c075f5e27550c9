import type { Command } from 'commander';
import { deleteSecret, listSecrets, putSecret } from '../client/index.ts';
import { handler, type CliContext } from './context.ts';
import { projectAccountId, readProjectConfig, type ProjectConfig } from './deploy.ts';
import { CliError, UsageError } from './errors.ts';
import { printJson, printTable } from './output.ts';

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
    process.stderr.write(
      `Enter the secret text you'd like assigned to the variable ${name} on the script named ${script}: `,
    );
    const value = await promptHidden();
    process.stderr.write('\n');
    return value;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function promptHidden(): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    let value = '';
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (error?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done();
        if (ch === '\u0003') return done(new CliError('cancelled'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
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
        await putSecret(ctx.client, accountId, script, name, value);
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
