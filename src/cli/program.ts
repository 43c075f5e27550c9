import { Command, CommanderError, Option } from 'commander';
import { registerCommands } from './commands.ts';
import { printJsonError } from './output.ts';

/**
 * The `ledge` command tree. Each noun registers itself from its own file (./commands.ts): with `command`, only
 * that noun is loaded and registered; without, all of them. `writeErr` receives the parser's own messages (usage
 * errors); output settings are copied to each command when it is created, so they are set here, first.
 */
export async function buildProgram(
  options: { writeErr?: (text: string) => void; command?: string | undefined } = {},
): Promise<Command> {
  const program = rootProgram(options);
  await registerCommands(program, options.command);
  return program;
}

/** The program without its commands: its description and the global options. */
function rootProgram(options: { writeErr?: (text: string) => void }): Command {
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
  return program;
}

/**
 * Parses and runs; usage errors exit 2, API and user errors 1 (set by the command handlers). With --json,
 * usage errors are printed in the same JSON shape as the other errors.
 */
export async function run(argv: string[]): Promise<number> {
  const json = argv.slice(2).includes('--json');
  const program = rootProgram(json ? { writeErr: () => {} } : {});
  await registerCommands(program, commandOf(argv.slice(2), program));
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

/**
 * The top-level command that `args` invoke, read as commander will: global options (and the value of those that
 * take one) may come before it. Undefined when anything else comes first (`--help`, `--version`, an unknown
 * option, `--`): then every command is loaded, so help and errors are what the whole program says.
 */
export function commandOf(args: string[], root: Command): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('-')) return arg;
    const [flag, inline] = arg.split(/=(.*)/s);
    const option = root.options.find((o) => o.long === flag);
    if (!option || option.long === '--version' || option.long === '--help') return undefined;
    if (option.required && inline === undefined) i++;
  }
  return undefined;
}
