import { AMBIENT_LOG_WINDOW_MS, LOG_BYTES_PER_INVOCATION } from './log-limits.ts';
import { SUBREQUEST_MODULE } from './subrequest-limit.ts';
import { traceShimSource } from './trace-shim.ts';

/** Marks the stdout lines of workerd that carry a function's console output (see log-hub.ts). */
export const LOG_MARKER = '\u0001ledge-log ';

/** What a console line says in place of the lines an invocation wrote past its budget. */
export const LOG_TRUNCATED_NOTE = `[ledge] console output of this invocation passed ${LOG_BYTES_PER_INVOCATION / 1024} KB: the rest of it is not recorded`;

/**
 * Source of a module loaded before the user's main module: it re-points `console` so each line says
 * which account and script wrote it (workerd's own stdout does not), as one JSON line that survives
 * multi-line messages.
 *
 * Every console method goes through it, not only log/info/warn/error/debug: one left alone (console.dir,
 * console.table...) would print the tenant's text untagged, into the server's own log, or forge another
 * script's tagged line. Each invocation may write LOG_BYTES_PER_INVOCATION of console lines, as on
 * Cloudflare (log-limits.ts): past that, one note says the rest is not recorded, and the invocation's tail
 * event is marked truncated. The budget travels with the invocation (an AsyncLocalStorage entered by the
 * handler wrappers of trace-shim.ts), so concurrent requests of one isolate each have their own; output
 * outside an invocation (module top level) shares one budget per AMBIENT_LOG_WINDOW_MS.
 */
export function consoleShimSource(accountId: string, script: string): string {
  return `const tag = ${JSON.stringify({ a: accountId, s: script })};
const write = console.log.bind(console);
const format = (value) => {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.stack ?? String(value);
  try { return JSON.stringify(value) ?? String(value); } catch { return String(value); }
};
let traceLog;
const LOG_MARK = ${JSON.stringify(LOG_MARKER)};
const LOG_LIMIT = ${LOG_BYTES_PER_INVOCATION};
const LOG_NOTE = ${JSON.stringify(LOG_TRUNCATED_NOTE)};
const logBudget = new AsyncLocalStorage();
const newBudget = () => ({ left: LOG_LIMIT, over: false });
let ambient = newBudget();
let ambientUntil = -Infinity;
function budgetNow() {
  const budget = logBudget.getStore();
  if (budget !== undefined) return budget;
  const now = Date.now();
  if (now >= ambientUntil) {
    ambient = newBudget();
    ambientUntil = now + ${AMBIENT_LOG_WINDOW_MS};
  }
  return ambient;
}
function emit(level, args) {
  const budget = budgetNow();
  if (budget.over) return;
  const line = LOG_MARK + JSON.stringify({ ...tag, level, time: Date.now(), message: args.map(format) });
  if (line.length > budget.left) {
    budget.over = true;
    write(LOG_MARK + JSON.stringify({ ...tag, level: 'warn', time: Date.now(), message: [LOG_NOTE] }));
    return;
  }
  budget.left -= line.length;
  write(line);
  traceLog(level, args);
}
const counts = new Map();
const timers = new Map();
const methods = {
  log: (...args) => emit('log', args),
  info: (...args) => emit('info', args),
  warn: (...args) => emit('warn', args),
  error: (...args) => emit('error', args),
  debug: (...args) => emit('debug', args),
  dir: (value) => emit('log', [value]),
  dirxml: (...args) => emit('log', args),
  table: (value) => emit('log', [value]),
  trace: (...args) => emit('log', ['Trace:', ...args]),
  group: (...args) => args.length > 0 && emit('log', args),
  groupCollapsed: (...args) => args.length > 0 && emit('log', args),
  assert: (ok, ...args) => ok || emit('error', ['Assertion failed', ...args]),
  count: (label = 'default') => {
    counts.set(label, (counts.get(label) ?? 0) + 1);
    emit('info', [label + ': ' + counts.get(label)]);
  },
  countReset: (label = 'default') => counts.delete(label),
  time: (label = 'default') => timers.set(label, Date.now()),
  timeLog: (label = 'default', ...args) => timers.has(label) && emit('info', [label + ': ' + (Date.now() - timers.get(label)) + 'ms', ...args]),
  timeEnd: (label = 'default') => {
    if (!timers.has(label)) return;
    emit('info', [label + ': ' + (Date.now() - timers.get(label)) + 'ms']);
    timers.delete(label);
  },
};
const quiet = () => undefined;
// Any other method of workerd's console (profile, timeStamp, context...) prints nothing rather than untagged text.
for (const name of Object.getOwnPropertyNames(console)) {
  if (typeof console[name] === 'function') console[name] = methods[name] ?? quiet;
}
for (const [name, method] of Object.entries(methods)) console[name] = method;
${traceShimSource(accountId, script)}`;
}

/** The module workerd starts: loads the shim first (imports run in order), then re-exports the user's main. */
export function wrapperSource(
  shimName: string,
  mainModule: string,
  hostGuard?: { host: string; domain: string },
  metricsModule?: string,
): string {
  const main = JSON.stringify(`./${mainModule}`);
  // The shim's __ledgeTrace wraps the default export for tail sessions (trace-shim.ts); with a metrics module
  // (metrics-shim.ts) that is wrapped again to count its requests.
  const instrumentImport = metricsModule ? `import { instrument } from ${JSON.stringify(`./${metricsModule}`)};\n` : '';
  // Outermost: each invocation's subrequests are counted in a frame of its own (subrequest-limit.ts).
  const exportDefault = (name: string) =>
    `export default limitSubrequests(${metricsModule ? `instrument(__ledgeTrace(${name}))` : `__ledgeTrace(${name})`});\n`;
  // The limit module comes after the shim, whose egress module replaces fetch too: modules run in import
  // order, so the count wraps the egress check, and a refused fetch() counts as a subrequest, as on Cloudflare.
  const head = `import { __ledgeTrace } from ${JSON.stringify(`./${shimName}`)};\nimport { limitSubrequests } from ${JSON.stringify(`./${SUBREQUEST_MODULE}`)};\n${instrumentImport}export * from ${main};\nimport main from ${main};\n`;
  if (!hostGuard) return `${head}${exportDefault('main')}`;
  // Only one script is routed: the socket reaches it directly (no router hop), so its default export
  // answers other hosts with the router's 404 itself.
  return `${head}const HOST = ${JSON.stringify(hostGuard.host)};
const hostOf = (request) => (request.headers.get('host') ?? '').toLowerCase().replace(/:\\d+$/, '').replace(/\\.$/, '');
const notFound = (host) => new Response(\`No function is deployed at \${host || '(no Host header)'}. Functions answer at <script>.<subdomain>.${hostGuard.domain}.\\n\`, {
  status: 404,
  headers: { 'content-type': 'text/plain; charset=utf-8' },
});
let guarded = main;
if (typeof main === 'function' && typeof main.prototype?.fetch === 'function') {
  guarded = class extends main {
    fetch(request, ...rest) {
      const host = hostOf(request);
      return host === HOST ? super.fetch(request, ...rest) : notFound(host);
    }
  };
} else if (main !== null && typeof main === 'object' && typeof main.fetch === 'function') {
  const fetch = main.fetch;
  guarded = Object.assign(Object.create(Object.getPrototypeOf(main)), main, {
    fetch(request, ...rest) {
      const host = hostOf(request);
      return host === HOST ? fetch.call(this, request, ...rest) : notFound(host);
    },
  });
}
${exportDefault('guarded')}`;
}
