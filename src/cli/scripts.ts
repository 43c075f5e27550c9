import type { Command } from 'commander';
import { listScriptStates } from '../client/index.ts';
import { handler } from './context.ts';
import { projectAccountId } from './deploy.ts';
import { printJson, printTable } from './output.ts';

/**
 * `ledge scripts`: the account's deployed scripts and whether each runs. A script that cannot start (its code
 * throws, hangs or runs out of memory while it loads) is quarantined: its host answers 503 with error 1101,
 * and this shows why until a deploy or a delete repairs it.
 */
export function registerScripts(program: Command): void {
  program
    .command('scripts')
    .description('list the deployed scripts and whether each runs (a quarantined one shows why it cannot start)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const states = await listScriptStates(ctx.client, await projectAccountId(ctx, undefined));
        if (ctx.json) return printJson(states);
        printTable(
          states.map((s) => ({
            script: s.script,
            state: s.state,
            version: s.version_id ?? '',
            'last failure': s.failure ? `${s.failure.at}: ${s.failure.reason.split('\n')[0]}` : '',
          })),
          ['script', 'state', 'version', 'last failure'],
          'No scripts are deployed.',
        );
      }),
    );
}
