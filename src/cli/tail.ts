import type { Command } from 'commander';
import { tailScript } from '../client/index.ts';
import { handler } from './context.ts';
import { projectAccountId, readProjectConfig } from './deploy.ts';
import { UsageError } from './errors.ts';

export function registerTail(program: Command): void {
  program
    .command('tail [script]')
    .description("Stream a function's console output (default script: `name` from wrangler.toml)")
    .option('--history <lines>', 'first print this many kept lines', '0')
    .option('--json', 'print one JSON object per line')
    .action(
      handler(async (ctx, [scriptArg]) => {
        const history = Number(ctx.options['history']);
        if (!Number.isInteger(history) || history < 0) throw new UsageError('--history must be a whole number');
        const config = scriptArg ? undefined : await readProjectConfig(process.cwd());
        const script = (scriptArg as string | undefined) ?? config!.name;
        const accountId = await projectAccountId(ctx, config);
        if (!ctx.json) process.stderr.write(`Tailing ${script} (Ctrl+C to stop)\n`);
        for await (const line of tailScript(ctx.client, accountId, script, { history })) {
          if (ctx.json) process.stdout.write(`${JSON.stringify(line)}\n`);
          else process.stdout.write(`${line.time} [${line.level}] ${line.message.join(' ')}\n`);
        }
      }),
    );
}
