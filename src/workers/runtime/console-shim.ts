import { SUBREQUEST_MODULE } from './subrequest-limit.ts';
import { traceShimSource } from './trace-shim.ts';

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
let traceLog;
for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
  console[level] = (...args) => {
    write(${JSON.stringify(LOG_MARKER)} + JSON.stringify({ ...tag, level, time: Date.now(), message: args.map(format) }));
    traceLog(level, args);
  };
}
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
