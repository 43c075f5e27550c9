import { Command, CommanderError, Option } from 'commander';
import { registerAdmin } from './admin.ts';
import { registerCreate } from './create-app.ts';
import { registerDeploy } from './deploy.ts';
import { registerBucket } from './bucket.ts';
import { registerObject } from './object.ts';
import { registerMonitors } from './monitors.ts';
import { registerPools } from './pools.ts';
import { registerLogin } from './login.ts';
import { registerMail } from './mail.ts';
import { registerNotifications } from './notifications.ts';
import { registerMigrationCommands } from './notifications-migration.ts';
import { registerSecret } from './secret.ts';
import { registerServer } from './server.ts';
import { registerTail } from './tail.ts';
import { registerWhoami } from './whoami.ts';

/** The `ledge` command tree. Each noun registers itself from its own file. */
export function buildProgram(): Command {
  const program = new Command('ledge')
    .description('Ledge: a self-hosted edge platform (object storage, functions, load balancing, notifications)')
    .version('0.1.0')
    .addOption(new Option('--api-url <url>', 'API base URL including /client/v4 (env LEDGE_API_URL)'))
    .addOption(new Option('--api-token <token>', 'API token (env LEDGE_API_TOKEN)'))
    .addOption(new Option('--email <email>', 'account email, with --api-key (env LEDGE_EMAIL)'))
    .addOption(new Option('--api-key <key>', 'global API key, with --email (env LEDGE_API_KEY)'))
    .addOption(new Option('--account-id <id>', 'account to act on (env LEDGE_ACCOUNT_ID)'))
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  registerServer(program);
  registerWhoami(program);
  registerLogin(program);
  registerAdmin(program);
  registerBucket(program);
  registerObject(program);
  registerPools(program);
  registerMonitors(program);
  registerNotifications(program);
  registerMail(program);
  // Adds `notifications migrate|migration-status` to the notifications noun: keep it after registerNotifications.
  registerMigrationCommands(program);
  registerCreate(program);
  registerDeploy(program);
  registerSecret(program);
  registerTail(program);
  return program;
}

/** Parses and runs; usage errors exit 2, API and user errors 1 (set by the command handlers). */
export async function run(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      const clean = ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code);
      return clean ? 0 : 2;
    }
    throw error;
  }
  return typeof process.exitCode === 'number' ? process.exitCode : 0;
}
