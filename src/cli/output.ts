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

/** One clear line on stderr; API errors include the v4 code. Returns the exit code to use. */
export function reportError(error: unknown): number {
  if (error instanceof ApiError) {
    process.stderr.write(`error: ${error.message} [code ${error.code}]\n`);
    return 1;
  }
  if (error instanceof UsageError) {
    process.stderr.write(`error: ${error.message}\n`);
    return 2;
  }
  if (error instanceof CliError) {
    process.stderr.write(`error: ${error.message}\n`);
    return 1;
  }
  if (error instanceof TypeError && error.message === 'fetch failed') {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? 'network error';
    process.stderr.write(
      `error: cannot reach the API (${reason}): is \`ledge server\` running, and is the API URL right?\n`,
    );
    return 1;
  }
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
}
