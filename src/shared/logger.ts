import type { Clock } from './clock.ts';
import { isoNow } from './time.ts';
/**
 * Structured logs on stderr, one record per line: `text` for a person at a terminal (time, level,
 * message, then key=value fields), or `json`, one object per line, to pipe to a collector.
 * The server's `LEDGE_LOG_LEVEL` setting (debug|info|warn|error|silent) sets the threshold; tests use `warn`.
 */
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof LEVELS;
export const LOG_LEVELS = Object.keys(LEVELS) as readonly LogLevel[];
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export function createLogger(
  level: LogLevel,
  /** The records' time (the platform's; a test's manual clock stamps its logs with its own time). */
  clock: Clock,
  base: Record<string, unknown> = {},
  write: (line: string) => void = (line) => process.stderr.write(line),
  format: LogFormat = 'json',
): Logger {
  const threshold = LEVELS[level];
  const emit = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < threshold) return;
    const record = { time: isoNow(clock), level: lvl, msg, ...base, ...fields };
    write(format === 'json' ? `${JSON.stringify(record, errorReplacer)}\n` : textLine(record));
  };
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (fields) => createLogger(level, clock, { ...base, ...fields }, write, format),
  };
}

/** `12:00:01.234 WARN  message key=value key="two words"`, then the stack of an error field, indented. */
function textLine(record: { time: string; level: string; msg: string } & Record<string, unknown>): string {
  const { time, level, msg, ...fields } = record;
  const stacks: string[] = [];
  const pairs = Object.entries(fields).map(([key, value]) => {
    if (value instanceof Error) {
      if (value.stack) stacks.push(value.stack.split('\n').slice(1).join('\n'));
      return `${key}=${textValue(value.message)}`;
    }
    return `${key}=${textValue(value)}`;
  });
  const head = `${time.slice(11, 23)} ${level.toUpperCase().padEnd(5)} ${msg}${pairs.length ? ` ${pairs.join(' ')}` : ''}`;
  return `${[head, ...stacks].join('\n')}\n`;
}

function textValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (value === undefined) return 'undefined';
  return JSON.stringify(value, errorReplacer) ?? String(value);
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}
