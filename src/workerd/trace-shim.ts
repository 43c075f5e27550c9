/** Marks the stdout lines of workerd that carry a traced request (see tail-traces.ts). */
export const TRACE_MARKER = '\u0001ledge-trace ';
/** The module that patches bucket bindings to read large bodies from the blob files (local-body-shim.ts). */
export const LOCAL_BODY_MODULE = '__ledge_r2.js';
/**
 * The platform's binding names (any case), and its module names in lower case (`__ledge_*.js`). Users
 * cannot name a binding, secret or module this way (upload.ts), and the platform's modules take these
 * bindings out of `env` before any user code runs (here and local-body-shim.ts).
 */
export const RESERVED_BINDING_PREFIX = '__LEDGE';
const RESERVED_PREFIX = RESERVED_BINDING_PREFIX;
/** The module that words a fetch() the egress policy refuses (network-service.ts egressShimSource). */
export const EGRESS_MODULE = '__ledge_egress.js';
/** The binding (hidden from the user's `env`) that reads the script's own tail flag (see tail-traces.ts). */
export const TAIL_FLAG_BINDING = `${RESERVED_PREFIX}_TAIL_FLAGS`;
/** The flag's file name in its script's own flag directory (tail-traces.ts scriptFlagDir). */
export const TAIL_FLAG_FILE = 'flag';
/** The tail flag's text when the events must carry the client's peer address (a session filters by it). */
export const TAIL_FLAG_PEER = 'peer';
/** How long an isolate trusts what it last read about its script's tail flag. */
export const TAIL_FLAG_TTL_MS = 1_000;
/** The symbol (Symbol.for) under which a scheduled() run's console calls wait for the metrics shim. */
export const SCHEDULED_TRACE_SYMBOL = 'ledge.scheduledTrace';
/** workerd's compatibility flag that makes `node:async_hooks` (AsyncLocalStorage) importable. */
export const ALS_FLAG = 'nodejs_als';

/**
 * The part of the console shim module that traces requests for `wrangler tail` / `ledge tail`.
 *
 * Why here and not in workerd's own tail workers: those are set in the config, so turning them on for one
 * script would restart workerd, and left on they cost every request a second isolate call. Here, a request
 * costs one comparison while nobody tails its script: the isolate reads its script's flag file (a disk
 * service, in process) at most once per TAIL_FLAG_TTL_MS. While the flag is set, each request writes a
 * short start line `<marker><account> <script> s <id> <ended> <method> <url>` (so a request whose process
 * the watchdog kills is still reported; `<ended>` names the requests whose end lines are still queued) and
 * an end line `<marker><account> <script> e <id> <TailEventMessage
 * JSON>` with its outcome, status, console calls and uncaught exception. Console calls are matched to their request with
 * AsyncLocalStorage, which stays right when an isolate serves several requests at once.
 *
 * `env` reaches the user's code without the flag binding (handlers get a copy; class entrypoints get it in
 * their constructor), so the platform's plumbing does not show in `Object.keys(env)`.
 */
export function traceShimSource(accountId: string, script: string): string {
  return `import { AsyncLocalStorage } from 'node:async_hooks';
import { env as platformEnv } from 'cloudflare:workers';
import { withLocalBodies } from ${JSON.stringify(`./${LOCAL_BODY_MODULE}`)};
import ${JSON.stringify(`./${EGRESS_MODULE}`)};
const traceStore = new AsyncLocalStorage();
const TRACE = ${JSON.stringify(TRACE_MARKER)};
const FLAG = ${JSON.stringify(TAIL_FLAG_BINDING)};
// The platform's own binding names (hidden-bindings.ts); a legacy user binding that merely starts with the
// reserved prefix (allowed before it was reserved) stays the user's.
const platformBinding = (name) => name === FLAG || /^${RESERVED_PREFIX}_(?:R2|BLOBS)_\\d+$/.test(name);
// Taken out of env before any user module runs (this module is imported first): user code reaches the
// flag binding neither through a handler's env nor through cloudflare:workers (issue 26 point 3).
let flagBinding;
if (platformEnv !== null && typeof platformEnv === 'object' && FLAG in platformEnv) {
  flagBinding = platformEnv[FLAG];
  delete platformEnv[FLAG];
}
const FLAG_URL = ${JSON.stringify(`http://tail-flags/${TAIL_FLAG_FILE}`)};
const HEAD = TRACE + ${JSON.stringify(`${accountId} ${script} `)};
const logValue = (value) => {
  if (value === undefined || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (value instanceof Error) return value.stack ?? String(value);
  try { const json = JSON.stringify(value); return json === undefined ? String(value) : JSON.parse(json); } catch { return String(value); }
};
traceLog = (level, args) => {
  const trace = traceStore.getStore();
  if (trace) trace.logs.push({ message: args.map(logValue), level, timestamp: Date.now() });
};
let tailing = false;
let withPeer = false;
let checkedAt = -Infinity;
async function readFlag() {
  checkedAt = Date.now();
  try {
    const answer = await flagBinding.fetch(FLAG_URL);
    tailing = answer.ok;
    withPeer = tailing && (await answer.text()) === ${JSON.stringify(TAIL_FLAG_PEER)};
    if (!tailing) await answer.body?.cancel();
  } catch {
    tailing = false;
  }
}
let envIn;
let envOut;
// The platform's bindings are gone from env already (deleted above and in the local body module); a
// copy without them is made only should a runtime ever keep them (a delete that did not take).
function userEnv(env) {
  if (env === envIn) return envOut;
  if (env === null || typeof env !== 'object') return env;
  let out = env;
  if (Object.keys(env).some(platformBinding)) {
    out = {};
    for (const name of Object.keys(env)) if (!platformBinding(name)) out[name] = env[name];
  }
  withLocalBodies(out);
  envIn = env;
  envOut = out;
  return out;
}
// Ids are unique per isolate by their counter, and across isolates by a random prefix made once (in a
// request: workerd refuses randomness at startup) instead of per request.
let idPrefix;
let sequence = 0;
// Lines leave workerd in batches, each one console.log (one write to stdout). A start line leaves at once,
// alone: it must be out before the request's code runs, or a request that spins is killed unreported. End
// lines wait: they leave together once the oldest has waited END_AGE_MS (taken along by the next start
// line), once END_BATCH are queued, or after END_FLUSH_MS when no request comes (a timer: an entry into a
// request's context, so only a fallback). Measured, a console.log that carries an end line cost workerd
// ~15-25 µs more per traced request than a start line alone, whether the end line rode with the next
// start line (the earlier design) or left alone; 64 end lines in one call cost a fraction of that each
// (docs/benchmarks-history.md, session 10). A process killed at its limit loses its queued end lines, so each
// start line also names the requests that ended since the last write: the server then knows they
// finished, and does not report them as killed.
const END_AGE_MS = 10;
const END_BATCH = 64;
const END_FLUSH_MS = 100;
let queued = [];
let queuedSince = 0;
let endedIds = [];
let flushing = false;
function flush() {
  if (queued.length === 0) return;
  const lines = queued;
  queued = [];
  endedIds = [];
  write(lines.join('\\n'));
}
function queueEnd(id, line, ctx) {
  if (queued.length === 0) queuedSince = Date.now();
  queued.push(line);
  endedIds.push(id);
  if (queued.length >= END_BATCH || typeof ctx?.waitUntil !== 'function') return flush();
  if (flushing) return;
  flushing = true;
  ctx.waitUntil(
    new Promise((resolve) => setTimeout(resolve, END_FLUSH_MS)).then(() => {
      flushing = false;
      flush();
    }),
  );
}
// \`<marker><account> <script> s <id> <ids that ended, comma-separated, or -> <method> <url>\`
function writeStart(id, method, url, now) {
  if (queued.length > 0 && now - queuedSince >= END_AGE_MS) {
    queued.push(\`\${HEAD}s \${id} - \${method} \${url}\`);
    return flush();
  }
  const ended = endedIds.length === 0 ? '-' : endedIds.join(',');
  endedIds = [];
  write(\`\${HEAD}s \${id} \${ended} \${method} \${url}\`);
}
async function traced(request, run, ctx) {
  idPrefix ??= \`\${Date.now().toString(36)}-\${Math.random().toString(36).slice(2)}-\`;
  const id = idPrefix + (++sequence).toString(36);
  const eventTimestamp = Date.now();
  // Read once: each read of a Request property is a call into workerd that copies the value.
  const { url, method } = request;
  // The start line is short (no JSON): it only lets the server report a request whose process is killed.
  writeStart(id, method, url, eventTimestamp);
  const trace = { logs: [], exceptions: [] };
  let outcome = 'ok';
  let status;
  try {
    const response = await traceStore.run(trace, run);
    status = response?.status;
    return response;
  } catch (error) {
    outcome = 'exception';
    const isError = error !== null && typeof error === 'object';
    trace.exceptions.push({
      name: isError && typeof error.name === 'string' ? error.name : 'Error',
      message: isError && 'message' in error ? String(error.message) : String(error),
      // Without the frames of Ledge's own wrapper modules: the stack is the user's.
      stack: isError && typeof error.stack === 'string' ? error.stack.split('\\n').filter((line) => !/__ledge_(console|main|metrics|limits)\\.js/.test(line)).join('\\n') : undefined,
      timestamp: Date.now(),
    });
    throw error;
  } finally {
    // forEach is one call into workerd; Object.fromEntries walked an iterator, a call per header.
    const headers = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    // The end line is the whole TailEventMessage, so the server can pass it on without re-encoding it.
    // \`cf\` is empty unless a session filters by client address: Ledge has no edge to fill Cloudflare's
    // properties in, and workerd's own cf object here is only its peer address, which workerd parses and
    // freezes on first read (~5-10 µs of a traced request; 3% of a tailed GET 1 KiB's throughput,
    // docs/benchmarks-history.md session 10).
    const event = {
      outcome,
      scriptName: tag.s,
      exceptions: trace.exceptions,
      logs: trace.logs,
      eventTimestamp,
      event: { request: { url, method, headers, cf: withPeer ? (request.cf ?? {}) : {} } },
      wallTime: Date.now() - eventTimestamp,
      diagnosticsChannelEvents: [],
      truncated: logBudget.getStore()?.over === true,
      executionModel: 'stateless',
    };
    if (status !== undefined) event.event.response = { status };
    queueEnd(id, \`\${HEAD}e \${id} \${JSON.stringify(event)}\`, ctx);
  }
}
async function fetchSlow(fetch, self, request, env, ctx) {
  await readFlag();
  return tailing ? traced(request, () => fetch.call(self, request, userEnv(env), ctx), ctx) : fetch.call(self, request, userEnv(env), ctx);
}
function tracedFetch(fetch, self, request, env, ctx) {
  // The flag read is trusted for TAIL_FLAG_TTL_MS either way: while a session is open, re-reading it per
  // request cost each traced request a disk-service call.
  if (Date.now() - checkedAt >= ${TAIL_FLAG_TTL_MS}) return fetchSlow(fetch, self, request, env, ctx);
  return tailing ? traced(request, () => fetch.call(self, request, userEnv(env), ctx), ctx) : fetch.call(self, request, userEnv(env), ctx);
}
// A Cron Trigger run (metrics-shim.ts calls scheduled() with its own controller): its console calls are kept
// on the controller under a symbol the user's code does not see, and go back to the server with the outcome,
// which publishes the run to the script's tail sessions as a scheduled event. Runs are rare: always kept.
const SCHEDULED_TRACE = Symbol.for(${JSON.stringify(SCHEDULED_TRACE_SYMBOL)});
function tracedScheduled(handler, self, controller, env, rest) {
  const trace = { logs: [], exceptions: [] };
  if (controller !== null && typeof controller === 'object') Object.defineProperty(controller, SCHEDULED_TRACE, { value: trace });
  return traceStore.run(trace, () => handler.call(self, controller, env, ...rest));
}
const rawEnv = new WeakMap();
export function __ledgeTrace(main) {
  if (typeof main === 'function' && typeof main.prototype?.fetch === 'function') {
    return class extends main {
      constructor(ctx, env, ...rest) { super(ctx, userEnv(env), ...rest); rawEnv.set(this, env); }
      fetch(request, ...rest) {
        const fetch = super.fetch;
        // Each invocation has its own console budget (logBudget, console-shim.ts).
        return logBudget.run(newBudget(), () => tracedFetch((req) => fetch.call(this, req, ...rest), this, request, rawEnv.get(this), undefined));
      }
    };
  }
  if (typeof main === 'function') {
    return class extends main {
      constructor(ctx, env, ...rest) { super(ctx, userEnv(env), ...rest); }
    };
  }
  if (main === null || typeof main !== 'object') return main;
  const wrapped = Object.create(Object.getPrototypeOf(main));
  // Own properties, and handlers a class instance has on its prototype.
  const handlers = ['fetch', 'scheduled', 'queue', 'email', 'tail', 'trace', 'tailStream', 'test'].filter((h) => typeof main[h] === 'function');
  for (const key of new Set([...Object.keys(main), ...handlers])) {
    const value = main[key];
    if (typeof value !== 'function') wrapped[key] = value;
    else if (key === 'fetch') wrapped.fetch = function (request, env, ctx) { return logBudget.run(newBudget(), () => tracedFetch(value, main, request, env, ctx)); };
    else if (key === 'scheduled') wrapped.scheduled = function (controller, env, ...rest) { return logBudget.run(newBudget(), () => tracedScheduled(value, main, controller, userEnv(env), rest)); };
    else wrapped[key] = function (event, env, ...rest) { return logBudget.run(newBudget(), () => value.call(main, event, userEnv(env), ...rest)); };
  }
  return wrapped;
}
`;
}
