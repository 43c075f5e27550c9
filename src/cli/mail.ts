import type { Command } from 'commander';
import type { Clock } from '../shared/clock.ts';
import { handler } from './context.ts';
import { CliError } from './errors.ts';
import { localDataDir } from './local-server.ts';
import { printJson, printTable } from './output.ts';

/**
 * `ledge mail list|show`: the local mailbox where notification mail lands when no SMTP server is
 * configured. Reads the data dir directly, like `ledge admin`.
 */
export function registerMail(program: Command): void {
  const mail = program
    .command('mail')
    .description('Read notification mail kept in the local mailbox (when the server runs without --smtp-url)')
    .option('--data-dir <dir>', 'data directory (env LEDGE_DATA_DIR)');

  // The mailbox module (with its SMTP client) is loaded only when a mail command runs.
  const mailbox = async (options: Record<string, unknown>, clock: Clock) => {
    const { LocalMailbox, dataPaths } = await import('../server/index.ts');
    return new LocalMailbox(dataPaths(localDataDir(options['dataDir'] as string | undefined)).mail, clock);
  };

  mail
    .command('list')
    .description('List messages, oldest first')
    .option('--to <address>', 'only messages to this address')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const to = (ctx.options['to'] as string | undefined)?.toLowerCase();
        const messages = (await mailbox(ctx.options, ctx.clock))
          .list()
          .filter((m) => to === undefined || m.to.toLowerCase() === to);
        if (ctx.json) printJson(messages);
        else
          printTable(
            messages.map((m) => ({ ID: m.id, Date: m.date, To: m.to, Subject: m.subject })),
            ['ID', 'Date', 'To', 'Subject'],
            'No mail.',
          );
      }),
    );

  mail
    .command('show <id>')
    .description('Print one message')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [id]) => {
        const message = (await mailbox(ctx.options, ctx.clock)).get(id as string);
        if (!message) throw new CliError(`no message ${id as string} in the local mailbox (see \`ledge mail list\`)`);
        if (ctx.json) printJson(message);
        else
          process.stdout.write(
            `From: ${message.from}\nTo: ${message.to}\nDate: ${message.date}\nSubject: ${message.subject}\n\n${message.text}`,
          );
      }),
    );
}
