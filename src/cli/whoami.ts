import type { Command } from 'commander';
import { getUser, listAccounts } from '../client/index.ts';
import { handler } from './context.ts';
import { printJson, printTable } from './output.ts';

export function registerWhoami(program: Command): void {
  program
    .command('whoami')
    .description('Show the email and the accounts of the current credentials')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const [user, accounts] = await Promise.all([getUser(ctx.client), listAccounts(ctx.client)]);
        const rows = accounts.map((a) => ({ id: a.id, name: a.name }));
        if (ctx.json) {
          printJson({
            email: user.email,
            api_url: ctx.connection.apiUrl,
            credentials_from: ctx.connection.source,
            accounts: rows,
          });
          return;
        }
        process.stdout.write(
          `You are logged in as ${user.email} at ${ctx.connection.apiUrl}.\n` +
            `Credentials from ${ctx.connection.origin}.\n\n`,
        );
        printTable(
          rows.map((r) => ({ 'Account Name': r.name, 'Account ID': r.id })),
          ['Account Name', 'Account ID'],
          'No accounts.',
        );
      }),
    );
}
