import type { Command } from 'commander';
import { ApiError, deleteWorker } from '../client/index.ts';
import { handler } from './context.ts';
import { projectAccountId, readProjectConfig, type ProjectConfig } from './deploy.ts';
import { CliError } from './errors.ts';
import { confirm, isInteractive } from './prompt.ts';

/** Cloudflare's "still in use" code: another script uses this one (on Ledge, as its tail Worker). */
const IN_USE = 10064;

/**
 * `ledge delete [script]`: deletes a function with its secrets, Cron Triggers, logs and workers.dev route.
 * On a terminal it asks first (and again when other scripts use it); `--force` asks nothing and deletes
 * even a script in use. Without a terminal it proceeds, as wrangler does in CI, but never forces.
 */
export function registerDelete(program: Command): void {
  program
    .command('delete [script]')
    .description('Delete a function and everything it owns (default: `name` from wrangler.toml)')
    .option('--force', 'ask nothing, and delete even if other scripts use it as their tail Worker')
    .option('--dry-run', 'say what would be deleted, delete nothing')
    .action(
      handler(async (ctx, [scriptArg]) => {
        let config: ProjectConfig | undefined;
        if (!scriptArg) config = await readProjectConfig(process.cwd());
        const script = (scriptArg as string | undefined) ?? config!.name;
        const accountId = await projectAccountId(ctx, config);
        const force = ctx.options['force'] === true;
        if (ctx.options['dryRun'] === true) {
          process.stdout.write(`--dry-run: would delete ${script}; nothing deleted.\n`);
          return;
        }
        if (
          !force &&
          !(await confirm(`Are you sure you want to delete ${script}? This action cannot be undone.`, true))
        )
          throw new CliError(`${script} was not deleted`);
        try {
          await deleteWorker(ctx.client, accountId, script, force);
        } catch (error) {
          if (!(error instanceof ApiError) || error.code !== IN_USE || !isInteractive()) throw error;
          const anyway = await confirm(
            `${error.message.replace(/: delete with force=true.*$/, '')}.\nDeleting it WILL BREAK them. Delete it anyway?`,
            false,
          );
          if (!anyway) throw new CliError(`${script} was not deleted`);
          await deleteWorker(ctx.client, accountId, script, true);
        }
        process.stdout.write(`Successfully deleted ${script}\n`);
      }),
    );
}
