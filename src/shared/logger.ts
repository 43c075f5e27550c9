/**
 * Structured logs: one JSON object per line on stderr, so they can be piped to any collector.
 * `LEDGE_LOG_LEVEL` (debug|info|warn|error|silent) sets the threshold; tests default to `warn`.
 */
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof LEVELS;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export function parseLogLevel(value: string | undefined, fallback: LogLevel): LogLevel {
  return value !== undefined && value in LEVELS ? (value as LogLevel) : fallback;
}

export function createLogger(
  level: LogLevel = parseLogLevel(process.env['LEDGE_LOG_LEVEL'], 'info'),
  base: Record<string, unknown> = {},
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  const threshold = LEVELS[level];
  const emit = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < threshold) return;
    write(
      `${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...base, ...fields }, errorReplacer)}\n`,
    );
  };
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}
