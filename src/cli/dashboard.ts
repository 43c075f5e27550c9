import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { ApiClient } from '../client/index.ts';
import { handler } from './context.ts';
import { printJson } from './output.ts';

/**
 * `ledge dashboard`: a one-time sign-in link for the browser dashboard of the server the CLI talks to. The
 * server trades the CLI's own credentials for a code that signs one browser in within five minutes.
 */
export function registerDashboard(program: Command): void {
  program
    .command('dashboard')
    .description('Print a one-time sign-in link to the dashboard (valid 5 minutes, for one sign-in)')
    .option('--open', 'open the link in the default browser (xdg-open / open)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const origin = new URL(ctx.connection.apiUrl).origin;
        const client = new ApiClient({ apiUrl: origin, auth: ctx.connection.auth });
        const { result } = await client.request<{ url: string; expires_in_seconds: number }>(
          'POST',
          '/dashboard/links',
        );
        if (ctx.json) printJson(result);
        else process.stdout.write(`Open this link to sign in (once, within 5 minutes):\n  ${result.url}\n`);
        if (ctx.options['open'] === true) {
          const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
          spawn(opener, [result.url], { stdio: 'ignore', detached: true })
            .on('error', () => process.stderr.write(`could not run ${opener}: open the link by hand\n`))
            .unref();
        }
      }),
    );
}
