import { existsSync, rmSync } from 'node:fs';
import type { Command } from 'commander';
import { ApiClient, getUser } from '../client/index.ts';
import { handler } from './context.ts';
import { normalizeApiUrl } from './local-server.ts';
import { UsageError } from './errors.ts';
import { printJson } from './output.ts';
import { configPath, DEFAULT_API_URL, writeSavedConfig, type SavedConfig } from './settings.ts';

export function registerLogin(program: Command): void {
  program
    .command('login')
    .description('Check credentials against an API and save them for later commands (file mode 0600)')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nUses the global --api-url with --api-token, or --email with --api-key.')
    .action(
      handler(async (ctx) => {
        const o = ctx.options;
        if (!o.apiToken && !(o.email && o.apiKey))
          throw new UsageError('ledge login needs --api-token, or --email with --api-key');
        const apiUrl = normalizeApiUrl(o.apiUrl ?? DEFAULT_API_URL);
        const auth = o.apiToken ? { token: o.apiToken } : { email: o.email as string, key: o.apiKey as string };
        const user = await getUser(new ApiClient({ apiUrl, auth }));
        const saved: SavedConfig = { api_url: apiUrl, account_id: o.accountId };
        if (o.apiToken) saved.api_token = o.apiToken;
        else Object.assign(saved, { email: o.email, api_key: o.apiKey });
        const path = writeSavedConfig(saved);
        if (ctx.json) printJson({ email: user.email, api_url: apiUrl, config: path });
        else process.stdout.write(`Logged in as ${user.email} at ${apiUrl}. Saved to ${path}.\n`);
      }),
    );

  program
    .command('logout')
    .description('Forget the credentials saved by `ledge login`')
    .action(
      handler(() => {
        const path = configPath();
        if (existsSync(path)) rmSync(path);
        process.stdout.write('Logged out.\n');
      }),
    );
}
