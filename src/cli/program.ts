import { Command, CommanderError, Option } from 'commander';
import { registerAdmin } from './admin.ts';
import { registerCreate } from './create-app.ts';
import { registerDashboard } from './dashboard.ts';
import { registerDeploy } from './deploy.ts';
import { registerDelete } from './delete.ts';
import { registerBucket } from './bucket.ts';
import { registerObject } from './object.ts';
import { registerMonitors } from './monitors.ts';
import { registerPools } from './pools.ts';
import { registerZones } from './zones.ts';
import { registerLoadBalancers } from './load-balancers.ts';
import { registerLogin } from './login.ts';
import { registerMail } from './mail.ts';
import { registerNotifications } from './notifications.ts';
import { registerMigrationCommands } from './notifications-migration.ts';
import { registerCrons } from './crons.ts';
import { registerS3 } from './s3.ts';
import { registerScripts } from './scripts.ts';
import { registerSecret } from './secret.ts';
import { registerServer } from './server.ts';
import { registerTail } from './tail.ts';
import { registerWhoami } from './whoami.ts';
import { printJsonError } from './output.ts';

/**
 * The `ledge` command tree. Each noun registers itself from its own file. `writeErr` receives the parser's
 * own messages (usage errors); output settings are copied to each command when it is created, so they are
 * set here, first.
 */
export function buildProgram(options: { writeErr?: (text: string) => void } = {}): Command {
  const program = new Command('ledge');
  if (options.writeErr) program.configureOutput({ writeErr: options.writeErr });
  // Every --help lists the options that apply, the global ones (--api-url, --api-token, ...) included.
  program.configureHelp({ showGlobalOptions: true });
  program
    .description('Ledge: a self-hosted edge platform (object storage, functions, load balancing, notifications)')
    .version('0.1.0')
    .addOption(
      new Option(
        '--api-url <url>',
        'API base URL, e.g. http://127.0.0.1:8787/client/v4; /client/v4 is added to a URL without a path (env LEDGE_API_URL)',
      ),
    )
    .addOption(new Option('--api-token <token>', 'API token (env LEDGE_API_TOKEN)'))
    .addOption(new Option('--email <email>', 'account email, with --api-key (env LEDGE_EMAIL)'))
    .addOption(new Option('--api-key <key>', 'global API key, with --email (env LEDGE_API_KEY)'))
    .addOption(new Option('--account-id <id>', 'account to act on (env LEDGE_ACCOUNT_ID)'))
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  registerServer(program);
  registerWhoami(program);
  registerDashboard(program);
  registerLogin(program);
  registerAdmin(program);
  registerBucket(program);
  registerObject(program);
  registerS3(program);
  registerPools(program);
  registerMonitors(program);
  registerZones(program);
  registerLoadBalancers(program);
  registerNotifications(program);
  registerMail(program);
  // Adds `notifications migrate|migration-status` to the notifications noun: keep it after registerNotifications.
  registerMigrationCommands(program);
  registerCreate(program);
  registerDeploy(program);
  registerDelete(program);
  registerSecret(program);
  registerTail(program);
  registerCrons(program);
  registerScripts(program);
  return program;
}

/**
 * Parses and runs; usage errors exit 2, API and user errors 1 (set by the command handlers). With --json,
 * usage errors are printed in the same JSON shape as the other errors.
 */
export async function run(argv: string[]): Promise<number> {
  const json = argv.slice(2).includes('--json');
  const program = buildProgram(json ? { writeErr: () => {} } : {});
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // `ledge` or `ledge pools` without a command prints the help as an error (exitCode 1): a usage error.
      const clean = ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code);
      if (clean && error.exitCode === 0) return 0;
      if (json) printJsonError(2, error.message.replace(/^error: /, ''));
      return 2;
    }
    throw error;
  }
  return typeof process.exitCode === 'number' ? process.exitCode : 0;
}
