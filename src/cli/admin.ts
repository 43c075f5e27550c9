import type { Command } from 'commander';
import type { Platform } from '../server/index.ts';
import type { Clock } from '../shared/clock.ts';
import { isLedgeError } from '../shared/errors.ts';
import { handler } from './context.ts';
import { CliError } from './errors.ts';
import { localDataDir } from './local-server.ts';
import { printJson } from './output.ts';

/**
 * Local administration for multi-tenant setups. Works on the data dir directly (SQLite in WAL mode lets
 * it run next to a live server), so it needs no credentials: whoever can read the data dir is admin.
 */
export function registerAdmin(program: Command): void {
  const admin = program
    .command('admin')
    .description('Administer accounts, users and tokens directly in a data dir')
    .option('--data-dir <dir>', 'data directory (env LEDGE_DATA_DIR)')
    .option(
      '--database-url <url>',
      "the data dir's PostgreSQL (env LEDGE_DATABASE_URL; default: the one its server last ran on, else SQLite)",
    );

  admin
    .command('account')
    .description('Manage accounts')
    .command('create')
    .description('Create an account')
    .requiredOption('--name <name>', 'account name')
    .option('--owner <email>', 'make this existing user a member (Administrator)')
    .option('--json', 'print JSON')
    .action(
      handler((ctx) =>
        withPlatform(ctx.options, ctx.clock, async (platform) => {
          const owner = ctx.options['owner'] as string | undefined;
          const user = owner ? await requireUser(platform, owner) : undefined;
          const account = await platform.accounts.createAccount({ name: ctx.options['name'] as string });
          if (user) await platform.accounts.addMember(account.id, user.id);
          if (ctx.json) printJson(account);
          else
            process.stdout.write(
              `Created account ${account.name} (${account.id})${user ? ` owned by ${user.email}` : ''}.\n`,
            );
        }),
      ),
    );

  admin
    .command('user')
    .description('Manage users')
    .command('create')
    .description('Create a user with a global API key (printed once)')
    .argument('<email>', 'email address')
    .option('--account <id>', 'make the user a member (Administrator) of this account')
    .option('--json', 'print JSON')
    .action(
      handler((ctx, [email]) =>
        withPlatform(ctx.options, ctx.clock, async (platform) => {
          const accountId = ctx.options['account'] as string | undefined;
          if (accountId && !(await platform.accounts.getAccount(accountId)))
            throw new CliError(`no account ${accountId}`);
          const { user, apiKey } = await platform.accounts.createUser({ email: email as string });
          if (accountId) await platform.accounts.addMember(accountId, user.id);
          if (ctx.json) printJson({ id: user.id, email: user.email, api_key: apiKey, account_id: accountId ?? null });
          else
            process.stdout.write(`Created user ${user.email} (${user.id}).\nGlobal API key (shown once): ${apiKey}\n`);
        }),
      ),
    );

  admin
    .command('token')
    .description('Manage API tokens')
    .command('create')
    .description('Create an API token for a user (printed once)')
    .requiredOption('--user <email>', 'the user the token acts as')
    .option('--name <name>', 'token name', 'cli token')
    .option('--account <id>', 'limit the token to this account')
    .option('--read-only', 'allow only reads (GET)')
    .option('--json', 'print JSON')
    .action(
      handler((ctx) =>
        withPlatform(ctx.options, ctx.clock, async (platform) => {
          const user = await requireUser(platform, ctx.options['user'] as string);
          const accountId = ctx.options['account'] as string | undefined;
          if (accountId && !(await platform.accounts.getAccount(accountId)))
            throw new CliError(`no account ${accountId}`);
          const { token, value } = await platform.accounts.createToken({
            userId: user.id,
            name: ctx.options['name'] as string,
            accountId: accountId ?? null,
            readOnly: ctx.options['readOnly'] === true,
          });
          if (ctx.json) printJson({ ...token, value });
          else process.stdout.write(`Created token ${token.name} (${token.id}).\nToken (shown once): ${value}\n`);
        }),
      ),
    );
}

async function withPlatform(
  options: Record<string, unknown>,
  clock: Clock,
  fn: (platform: Platform) => Promise<void>,
): Promise<void> {
  // Loaded on demand: the rest of the CLI should not pay for the whole server at start-up.
  const { createPlatform, rememberedDatabaseUrl, resolveServerConfig } = await import('../server/index.ts');
  const { createLogger } = await import('../shared/logger.ts');
  // The running server's data dir when one runs (SQLite in WAL mode lets both write), else ./.ledge.
  const dataDir = localDataDir(options['dataDir'] as string | undefined);
  const config = resolveServerConfig({
    dataDir,
    databaseUrl:
      (options['databaseUrl'] as string | undefined) ??
      (process.env['LEDGE_DATABASE_URL'] || undefined) ??
      rememberedDatabaseUrl(dataDir),
  });
  const platform = await createPlatform(config, createLogger('warn', clock), clock);
  try {
    await fn(platform);
  } catch (error) {
    if (isLedgeError(error)) throw new CliError(error.message);
    throw error;
  } finally {
    platform.blobStore.close?.();
    await platform.db.close();
  }
}

async function requireUser(platform: Platform, email: string) {
  const user = await platform.accounts.getUserByEmail(email);
  if (!user) throw new CliError(`no user with email ${email} (create one with \`ledge admin user create\`)`);
  return user;
}
