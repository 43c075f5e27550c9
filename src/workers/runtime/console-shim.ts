/** Marks the stdout lines of workerd that carry a function's console output (see log-hub.ts). */
export const LOG_MARKER = '\u0001ledge-log ';

/**
 * Source of a module loaded before the user's main module: it re-points `console` so each line says
 * which account and script wrote it (workerd's own stdout does not), as one JSON line that survives
 * multi-line messages.
 */
export function consoleShimSource(accountId: string, script: string): string {
  return `const tag = ${JSON.stringify({ a: accountId, s: script })};
const write = console.log.bind(console);
const format = (value) => {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.stack ?? String(value);
  try { return JSON.stringify(value) ?? String(value); } catch { return String(value); }
};
for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
  console[level] = (...args) => write(${JSON.stringify(LOG_MARKER)} + JSON.stringify({ ...tag, level, time: Date.now(), message: args.map(format) }));
}
`;
}

/** The module workerd starts: loads the shim first (imports run in order), then re-exports the user's main. */
export function wrapperSource(shimName: string, mainModule: string): string {
  const main = JSON.stringify(`./${mainModule}`);
  return `import ${JSON.stringify(`./${shimName}`)};\nexport * from ${main};\nexport { default } from ${main};\n`;
}
