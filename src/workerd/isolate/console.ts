import { AMBIENT_LOG_WINDOW_MS, LOG_BYTES_PER_INVOCATION, LOG_MARKER, LOG_TRUNCATED_NOTE } from './contract.js';
import { invocation } from './invocation.js';
import { ACCOUNT_ID, SCRIPT_NAME } from './params.js';

/**
 * Loaded before the user's main module (through trace.ts): it re-points `console` so each line says
 * which account and script wrote it (workerd's own stdout does not), as one JSON line that survives
 * multi-line messages.
 *
 * Every console method goes through it, not only log/info/warn/error/debug: one left alone (console.dir,
 * console.table...) would print the tenant's text untagged, into the server's own log, or forge another
 * script's tagged line. Each invocation may write LOG_BYTES_PER_INVOCATION of console lines, as on
 * Cloudflare (log-limits.ts): past that, one note says the rest is not recorded, and the invocation's tail
 * event is marked truncated. The budget travels with the invocation (invocation.ts), so concurrent requests
 * of one isolate each have their own; output
 * outside an invocation (module top level) shares one budget per AMBIENT_LOG_WINDOW_MS.
 */

export const tag = { a: ACCOUNT_ID, s: SCRIPT_NAME };
/** workerd's own console.log: one write to stdout. */
export const write: (line: string) => void = console.log.bind(console);

export interface LogBudget {
  left: number;
  over: boolean;
}
const newBudget = (): LogBudget => ({ left: LOG_BYTES_PER_INVOCATION, over: false });

type Level = 'log' | 'info' | 'warn' | 'error' | 'debug';
/** Where each console call is also kept for the request's tail event (trace.ts sets it). */
let traceLog: (level: Level, args: unknown[]) => void = () => undefined;
export function onConsoleCall(record: (level: Level, args: unknown[]) => void): void {
  traceLog = record;
}

const format = (value: unknown): string => {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.stack ?? String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
};
let ambient = newBudget();
let ambientUntil = -Infinity;
function budgetNow(): LogBudget {
  const budget = invocation.getStore();
  if (budget !== undefined) return budget;
  const now = Date.now();
  if (now >= ambientUntil) {
    ambient = newBudget();
    ambientUntil = now + AMBIENT_LOG_WINDOW_MS;
  }
  return ambient;
}
function emit(level: Level, args: unknown[]): void {
  const budget = budgetNow();
  if (budget.over) return;
  const line = LOG_MARKER + JSON.stringify({ ...tag, level, time: Date.now(), message: args.map(format) });
  if (line.length > budget.left) {
    budget.over = true;
    write(LOG_MARKER + JSON.stringify({ ...tag, level: 'warn', time: Date.now(), message: [LOG_TRUNCATED_NOTE] }));
    return;
  }
  budget.left -= line.length;
  write(line);
  traceLog(level, args);
}
const counts = new Map<unknown, number>();
const timers = new Map<unknown, number>();
const methods: Record<string, (...args: never[]) => unknown> = {
  log: (...args: unknown[]) => emit('log', args),
  info: (...args: unknown[]) => emit('info', args),
  warn: (...args: unknown[]) => emit('warn', args),
  error: (...args: unknown[]) => emit('error', args),
  debug: (...args: unknown[]) => emit('debug', args),
  dir: (value: unknown) => emit('log', [value]),
  dirxml: (...args: unknown[]) => emit('log', args),
  table: (value: unknown) => emit('log', [value]),
  trace: (...args: unknown[]) => emit('log', ['Trace:', ...args]),
  group: (...args: unknown[]) => args.length > 0 && emit('log', args),
  groupCollapsed: (...args: unknown[]) => args.length > 0 && emit('log', args),
  assert: (ok: unknown, ...args: unknown[]) => ok || emit('error', ['Assertion failed', ...args]),
  count: (label: unknown = 'default') => {
    counts.set(label, (counts.get(label) ?? 0) + 1);
    emit('info', [label + ': ' + counts.get(label)]);
  },
  countReset: (label: unknown = 'default') => counts.delete(label),
  time: (label: unknown = 'default') => timers.set(label, Date.now()),
  timeLog: (label: unknown = 'default', ...args: unknown[]) =>
    timers.has(label) && emit('info', [label + ': ' + (Date.now() - timers.get(label)!) + 'ms', ...args]),
  timeEnd: (label: unknown = 'default') => {
    if (!timers.has(label)) return;
    emit('info', [label + ': ' + (Date.now() - timers.get(label)!) + 'ms']);
    timers.delete(label);
  },
};
const quiet = () => undefined;
const writable = console as unknown as Record<string, unknown>;
// Any other method of workerd's console (profile, timeStamp, context...) prints nothing rather than untagged text.
for (const name of Object.getOwnPropertyNames(console)) {
  if (typeof writable[name] === 'function') writable[name] = methods[name] ?? quiet;
}
for (const [name, method] of Object.entries(methods)) writable[name] = method;
