import type { Command } from 'commander';
import { openTailSession, tailScript, type TailEventMessage, type TailSessionFilter } from '../client/index.ts';
import { handler } from './context.ts';
import { projectAccountId, readProjectConfig } from './deploy.ts';
import { UsageError } from './errors.ts';

const STATUSES = ['ok', 'error', 'canceled'];

export function registerTail(program: Command): void {
  program
    .command('tail [script]')
    .description(
      "Stream a function's requests as they happen: one line per request, its console output and uncaught exceptions under it (default script: `name` from wrangler.toml)",
    )
    .option(
      '--status <status...>',
      'only requests with this outcome: ok, error (exception or limit exceeded), canceled',
    )
    .option('--method <method...>', 'only requests with this HTTP method')
    .option('--search <text>', 'only requests whose console output or exception contains this text')
    .option('--history <lines>', 'first print this many kept console lines', '0')
    .option('--json', "print one JSON event per line (wrangler tail's shape)")
    .option('--format <format>', 'json (as --json) or pretty (the default), as wrangler tail spells it')
    .action(
      handler(async (ctx, [scriptArg]) => {
        const format = ctx.options['format'] as string | undefined;
        if (format !== undefined && format !== 'json' && format !== 'pretty')
          throw new UsageError(`--format must be json or pretty, got "${format}"`);
        if (format === 'json') ctx.options.json = true;
        const history = Number(ctx.options['history']);
        if (!Number.isInteger(history) || history < 0) throw new UsageError('--history must be a whole number');
        const filters = tailFilters(ctx.options);
        const config = scriptArg ? undefined : await readProjectConfig(process.cwd());
        const script = (scriptArg as string | undefined) ?? config!.name;
        const accountId = await projectAccountId(ctx, config);
        if (history > 0) {
          for await (const line of tailScript(ctx.client, accountId, script, { history, follow: false })) {
            if (ctx.json) process.stdout.write(`${JSON.stringify(line)}\n`);
            else process.stdout.write(`${line.time} [${line.level}] ${line.message.join(' ')}\n`);
          }
        }
        const session = await openTailSession(ctx.client, accountId, script, filters);
        const stop = () => void session.close();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        await session.opened;
        if (!ctx.json) process.stderr.write(`Tailing ${script} (Ctrl+C to stop)\n`);
        for await (const event of session.events) {
          process.stdout.write(ctx.json ? `${JSON.stringify(event)}\n` : formatEvent(event));
        }
      }),
    );
}

function tailFilters(options: Record<string, unknown>): TailSessionFilter[] {
  const filters: TailSessionFilter[] = [];
  const statuses = options['status'] as string[] | undefined;
  if (statuses) {
    const unknown = statuses.find((s) => !STATUSES.includes(s));
    if (unknown) throw new UsageError(`--status ${unknown}: use ok, error or canceled`);
    const outcomes = new Set<string>();
    for (const status of statuses) {
      if (status === 'error')
        for (const o of ['exception', 'exceededCpu', 'exceededMemory', 'unknown']) outcomes.add(o);
      else outcomes.add(status);
    }
    filters.push({ outcome: [...outcomes] });
  }
  const methods = options['method'] as string[] | undefined;
  if (methods) filters.push({ method: methods.map((m) => m.toUpperCase()) });
  const search = options['search'] as string | undefined;
  if (search !== undefined) {
    if (search === '') throw new UsageError('--search needs some text');
    filters.push({ query: search });
  }
  return filters;
}

const OUTCOME_TEXT: Record<string, string> = {
  ok: 'ok',
  exception: 'exception',
  exceededCpu: 'exceeded CPU limit',
  exceededMemory: 'exceeded memory limit',
  canceled: 'canceled',
};

/** `<time> <METHOD> <url> <status> <duration> <outcome>`, then the console lines and exceptions indented. */
export function formatEvent(event: TailEventMessage): string {
  const request = event.event?.request;
  // An uncaught exception has no response in the event; workerd answered the client with a 500.
  const status = event.event?.response?.status ?? (event.outcome === 'exception' ? 500 : '-');
  const duration = event.wallTime === undefined ? '-' : `${event.wallTime}ms`;
  const outcome = OUTCOME_TEXT[event.outcome] ?? event.outcome;
  const cron = event.event?.cron;
  // A Cron Trigger run: its cron and scheduled time, as wrangler tail prints one.
  const head = request
    ? `${request.method} ${request.url} ${status}`
    : cron !== undefined
      ? `[scheduled] "${cron}" @ ${new Date(event.event?.scheduledTime ?? event.eventTimestamp).toISOString()}`
      : `(no request) ${status}`;
  const lines = [`${new Date(event.eventTimestamp).toISOString()} ${head} ${duration} ${outcome}`];
  for (const log of event.logs) {
    const text = log.message.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join(' ');
    lines.push(...indent(`[${log.level}] ${text}`));
  }
  for (const exception of event.exceptions) {
    lines.push(...indent(exception.stack ?? `${exception.name}: ${exception.message}`));
  }
  return `${lines.map(escapeControl).join('\n')}\n`;
}

/** A function's output must not drive the terminal: control characters (but tabs) are shown as \uXXXX. */
function escapeControl(line: string): string {
  return line.replace(
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function indent(text: string): string[] {
  return text.split('\n').map((line) => `  ${line}`);
}
