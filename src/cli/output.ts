import { ApiError } from '../client/index.ts';
import { CliError, UsageError } from './errors.ts';

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Prints rows as an aligned table with a header line; an empty list prints `emptyText`. */
export function printTable(rows: Record<string, unknown>[], columns: string[], emptyText = 'Nothing to show.'): void {
  if (rows.length === 0) {
    process.stdout.write(`${emptyText}\n`);
    return;
  }
  const cell = (value: unknown) => (value === undefined || value === null ? '' : String(value));
  const widths = columns.map((col) => Math.max(col.length, ...rows.map((row) => cell(row[col]).length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${line(columns)}\n`);
  for (const row of rows) process.stdout.write(`${line(columns.map((col) => cell(row[col])))}\n`);
}

/** An error as the CLI reports it: the v4 code for API errors, else the exit code (1 user error, 2 usage). */
export interface ReportedError {
  exitCode: number;
  code: number;
  message: string;
}

/** Why the API could not be reached at all (fetch's failure, or node:http's: object transfers use it), if so. */
function unreachable(error: unknown): string | undefined {
  if (error instanceof TypeError && error.message === 'fetch failed') {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? 'network error';
  }
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  const connecting = syscall === 'connect' || syscall === 'getaddrinfo';
  return error instanceof Error && connecting && typeof code === 'string' ? code : undefined;
}

export function describeError(error: unknown): ReportedError {
  if (error instanceof ApiError) return { exitCode: 1, code: error.code, message: error.message };
  if (error instanceof UsageError) return { exitCode: 2, code: 2, message: error.message };
  if (error instanceof CliError) return { exitCode: error.exitCode, code: 1, message: error.message };
  const reason = unreachable(error);
  if (reason !== undefined) {
    return {
      exitCode: 1,
      code: 1,
      message: `cannot reach the API (${reason}): is \`ledge server\` running, and is the API URL right?`,
    };
  }
  return { exitCode: 1, code: 1, message: error instanceof Error ? error.message : String(error) };
}

/**
 * Reports a failure: one clear line on stderr (API errors include the v4 code), or with --json the v4
 * error shape on stdout, where a script reads the command's output. Returns the exit code to use.
 */
export function reportError(error: unknown, json = false): number {
  const reported = describeError(error);
  if (json) printJsonError(reported.code, reported.message);
  else if (error instanceof ApiError) process.stderr.write(`error: ${reported.message} [code ${reported.code}]\n`);
  else process.stderr.write(`error: ${reported.message}\n`);
  return reported.exitCode;
}

export function printJsonError(code: number, message: string): void {
  process.stdout.write(`${JSON.stringify({ success: false, errors: [{ code, message }] })}\n`);
}
