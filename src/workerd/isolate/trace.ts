import { AsyncLocalStorage } from 'node:async_hooks';
import { env as platformEnv } from 'cloudflare:workers';
import { withLocalBodies } from './r2.js';
import './egress.js';
import { onConsoleCall, tag, write } from './console.js';
import { invocation, newInvocation } from './invocation.js';
import {
  EGRESS_BINDING,
  METRICS_SECRET_BINDING,
  PLATFORM_FRAME,
  RESERVED_BINDING_PREFIX,
  SCHEDULED_TRACE_SYMBOL,
  TAIL_FLAG_BINDING,
  TAIL_FLAG_FILE,
  TAIL_FLAG_PEER,
  TAIL_FLAG_TTL_MS,
  TRACE_MARKER,
} from './contract.js';
import { ACCOUNT_ID, SCRIPT_NAME } from './params.js';

/**
 * Traces requests for `wrangler tail` / `ledge tail`; the first module the wrapper imports, so it runs (with
 * what it imports: local bodies, egress, console) before any user module.
 *
 * Why here and not in workerd's own tail workers: those are set in the config, so turning them on for one
 * script would restart workerd, and left on they cost every request a second isolate call. Here, a request
 * costs one comparison while nobody tails its script: the isolate reads its script's flag file (a disk
 * service, in process) at most once per TAIL_FLAG_TTL_MS. While the flag is set, each request writes a
 * short start line `<marker><account> <script> s <id> <ended> <method> <url>` (so a request whose process
 * the watchdog kills is still reported; `<ended>` names the requests whose end lines are still queued) and
 * an end line `<marker><account> <script> e <id> <TailEventMessage JSON>` with its outcome, status, console
 * calls and uncaught exception. Console calls are matched to their request with AsyncLocalStorage, which
 * stays right when an isolate serves several requests at once.
 *
 * `env` reaches the user's code without the flag binding (handlers get a copy; class entrypoints get it in
 * their constructor), so the platform's plumbing does not show in `Object.keys(env)`.
 */

type Env = Record<string, unknown>;
interface TraceLog {
  message: unknown[];
  level: string;
  timestamp: number;
}
interface TraceException {
  name: string;
  message: string;
  stack: string | undefined;
  timestamp: number;
}
interface Trace {
  logs: TraceLog[];
  exceptions: TraceException[];
}
type Handler = (this: unknown, ...args: unknown[]) => unknown;
type FetchHandler = (this: unknown, request: Request, env: unknown, ctx: ExecutionContext | undefined) => unknown;

const traceStore = new AsyncLocalStorage<Trace>();
const FLAG = TAIL_FLAG_BINDING;
// Bucket slots (r2.ts), and the Durable Object classes' gate namespaces (object-gate.ts).
const PLATFORM_BINDING = new RegExp(`^${RESERVED_BINDING_PREFIX}_(?:(?:R2|BLOBS)_\\d+|DO_[A-Za-z_$][\\w$]*)$`);
// The platform's own binding names (config/bindings/); a legacy user binding that merely starts with the
// reserved prefix (allowed before it was reserved) stays the user's.
const platformBinding = (name: string) =>
  name === FLAG || name === METRICS_SECRET_BINDING || name === EGRESS_BINDING || PLATFORM_BINDING.test(name);
// Taken out of env before any user module runs (this module is imported first): user code reaches the
// flag binding neither through a handler's env nor through cloudflare:workers (a platform binding, not the user's).
let flagBinding: Fetcher | undefined;
const platform = platformEnv as unknown as Env | null;
if (platform !== null && typeof platform === 'object' && FLAG in platform) {
  flagBinding = platform[FLAG] as Fetcher;
  delete platform[FLAG];
}
const FLAG_URL = `http://tail-flags/${TAIL_FLAG_FILE}`;
const HEAD = `${TRACE_MARKER}${ACCOUNT_ID} ${SCRIPT_NAME} `;
const logValue = (value: unknown): unknown => {
  if (
    value === undefined ||
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean' ||
    value === null
  )
    return value;
  if (value instanceof Error) return value.stack ?? String(value);
  try {
    const json = JSON.stringify(value);
    return json === undefined ? String(value) : JSON.parse(json);
  } catch {
    return String(value);
  }
};
onConsoleCall((level, args) => {
  const trace = traceStore.getStore();
  if (trace) trace.logs.push({ message: args.map(logValue), level, timestamp: Date.now() });
});
let tailing = false;
let withPeer = false;
let checkedAt = -Infinity;
async function readFlag(): Promise<void> {
  checkedAt = Date.now();
  try {
    const answer = await flagBinding!.fetch(FLAG_URL);
    tailing = answer.ok;
    withPeer = tailing && (await answer.text()) === TAIL_FLAG_PEER;
    if (!tailing) await answer.body?.cancel();
  } catch {
    tailing = false;
  }
}
let envIn: unknown;
let envOut: unknown;
// The platform's bindings are gone from env already (deleted above and in the local body module); a
// copy without them is made only should a runtime ever keep them (a delete that did not take).
function userEnv(env: unknown): unknown {
  if (env === envIn) return envOut;
  if (env === null || typeof env !== 'object') return env;
  let out = env as Env;
  if (Object.keys(env).some(platformBinding)) {
    out = {};
    for (const name of Object.keys(env)) if (!platformBinding(name)) out[name] = (env as Env)[name];
  }
  withLocalBodies(out);
  envIn = env;
  envOut = out;
  return out;
}
// Ids are unique per isolate by their counter, and across isolates by a random prefix made once (in a
// request: workerd refuses randomness at startup) instead of per request.
let idPrefix: string | undefined;
let sequence = 0;
// Lines leave workerd in batches, each one console.log (one write to stdout). A start line leaves at once, alone: it
// must be out before the request's code runs, or a request that spins is killed unreported. End lines wait: they
// leave together once the oldest has waited END_AGE_MS (taken along by the next start line), once END_BATCH are
// queued, or after END_FLUSH_MS when no request comes (a timer: an entry into a request's context, so only a
// fallback). Measured, a console.log that carries an end line cost workerd ~15-25 µs more per traced request than a
// start line alone, whether the end line rode with the next start line (the earlier design) or left alone; 64 end
// lines in one call cost a fraction of that each (docs/benchmarks-history.md, tail cost of 2026-11-25). A process
// killed at its limit loses its queued end lines, so each start line also names the requests that ended since the
// last write: the server then knows they finished, and does not report them as killed.
const END_AGE_MS = 10;
const END_BATCH = 64;
const END_FLUSH_MS = 100;
let queued: string[] = [];
let queuedSince = 0;
let endedIds: string[] = [];
let flushing = false;
function flush(): void {
  if (queued.length === 0) return;
  const lines = queued;
  queued = [];
  endedIds = [];
  write(lines.join('\n'));
}
function queueEnd(id: string, line: string, ctx: ExecutionContext | undefined): void {
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
// `<marker><account> <script> s <id> <ids that ended, comma-separated, or -> <method> <url>`
function writeStart(id: string, method: string, url: string, now: number): void {
  if (queued.length > 0 && now - queuedSince >= END_AGE_MS) {
    queued.push(`${HEAD}s ${id} - ${method} ${url}`);
    return flush();
  }
  const ended = endedIds.length === 0 ? '-' : endedIds.join(',');
  endedIds = [];
  write(`${HEAD}s ${id} ${ended} ${method} ${url}`);
}
/** An uncaught exception as a tail event shows it, without the frames of the platform's own modules. */
export function exceptionOf(error: unknown): TraceException {
  const isError = error !== null && typeof error === 'object';
  const fields = error as { name?: unknown; message?: unknown; stack?: unknown };
  return {
    name: isError && typeof fields.name === 'string' ? fields.name : 'Error',
    message: isError && 'message' in fields ? String(fields.message) : String(error),
    stack:
      isError && typeof fields.stack === 'string'
        ? fields.stack
            .split('\n')
            .filter((line) => !PLATFORM_FRAME.test(line))
            .join('\n')
        : undefined,
    timestamp: Date.now(),
  };
}
async function traced(request: Request, run: () => unknown, ctx: ExecutionContext | undefined): Promise<unknown> {
  idPrefix ??= `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-`;
  const id = idPrefix + (++sequence).toString(36);
  const eventTimestamp = Date.now();
  // Read once: each read of a Request property is a call into workerd that copies the value.
  const { url, method } = request;
  // The start line is short (no JSON): it only lets the server report a request whose process is killed.
  writeStart(id, method, url, eventTimestamp);
  const trace: Trace = { logs: [], exceptions: [] };
  let outcome = 'ok';
  let status: number | undefined;
  try {
    const response = (await traceStore.run(trace, run)) as Response | undefined;
    status = response?.status;
    return response;
  } catch (error) {
    outcome = 'exception';
    trace.exceptions.push(exceptionOf(error));
    throw error;
  } finally {
    // forEach is one call into workerd; Object.fromEntries walked an iterator, a call per header.
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    // The end line is the whole TailEventMessage, so the server can pass it on without re-encoding it.
    // `cf` is empty unless a session filters by client address: Ledge has no edge to fill Cloudflare's
    // properties in, and workerd's own cf object here is only its peer address, which workerd parses and
    // freezes on first read (~5-10 µs of a traced request; 3% of a tailed GET 1 KiB's throughput,
    // docs/benchmarks-history.md, tail cost of 2026-11-25).
    const event: {
      event: { request: unknown; response?: { status: number } };
      [field: string]: unknown;
    } = {
      outcome,
      scriptName: tag.s,
      exceptions: trace.exceptions,
      logs: trace.logs,
      eventTimestamp,
      event: { request: { url, method, headers, cf: withPeer ? (request.cf ?? {}) : {} } },
      wallTime: Date.now() - eventTimestamp,
      diagnosticsChannelEvents: [],
      truncated: invocation.getStore()?.over === true,
      executionModel: 'stateless',
    };
    if (status !== undefined) event.event.response = { status };
    queueEnd(id, `${HEAD}e ${id} ${JSON.stringify(event)}`, ctx);
  }
}
async function fetchSlow(
  fetch: FetchHandler,
  self: unknown,
  request: Request,
  env: unknown,
  ctx: ExecutionContext | undefined,
): Promise<unknown> {
  await readFlag();
  return tailing
    ? traced(request, () => fetch.call(self, request, userEnv(env), ctx), ctx)
    : fetch.call(self, request, userEnv(env), ctx);
}
function tracedFetch(
  fetch: FetchHandler,
  self: unknown,
  request: Request,
  env: unknown,
  ctx: ExecutionContext | undefined,
): unknown {
  // The flag read is trusted for TAIL_FLAG_TTL_MS either way: while a session is open, re-reading it per
  // request cost each traced request a disk-service call.
  if (Date.now() - checkedAt >= TAIL_FLAG_TTL_MS) return fetchSlow(fetch, self, request, env, ctx);
  return tailing
    ? traced(request, () => fetch.call(self, request, userEnv(env), ctx), ctx)
    : fetch.call(self, request, userEnv(env), ctx);
}
// A Cron Trigger run (metrics.ts calls scheduled() with its own controller): its console calls are kept
// on the controller under a symbol the user's code does not see, and go back to the server with the outcome,
// which publishes the run to the script's tail sessions as a scheduled event. Runs are rare: always kept.
const SCHEDULED_TRACE = Symbol.for(SCHEDULED_TRACE_SYMBOL);
function tracedScheduled(handler: Handler, self: unknown, controller: unknown, env: unknown, rest: unknown[]): unknown {
  const trace: Trace = { logs: [], exceptions: [] };
  if (controller !== null && typeof controller === 'object')
    Object.defineProperty(controller, SCHEDULED_TRACE, { value: trace });
  return traceStore.run(trace, () => handler.call(self, controller, env, ...rest));
}
// Constructors of the user's classes, as their subclasses here call them.
type EntrypointClass = new (
  ctx: unknown,
  env: unknown,
  ...rest: unknown[]
) => {
  fetch?(request: Request, ...rest: unknown[]): unknown;
};
const rawEnv = new WeakMap<object, unknown>();
/** Wraps the user's default export: each invocation traced and given its own counts (invocation.ts), `env` without the platform's bindings. */
export function __ledgeTrace(main: unknown): unknown {
  if (typeof main === 'function' && typeof main.prototype?.fetch === 'function') {
    const Base = main as EntrypointClass;
    return class extends Base {
      constructor(ctx: unknown, env: unknown, ...rest: unknown[]) {
        super(ctx, userEnv(env), ...rest);
        rawEnv.set(this, env);
      }
      override fetch(request: Request, ...rest: unknown[]) {
        const fetch = super.fetch!;
        // Each invocation has its own console budget and subrequest count (invocation.ts).
        return invocation.run(newInvocation(), () =>
          tracedFetch((req: Request) => fetch.call(this, req, ...rest), this, request, rawEnv.get(this), undefined),
        );
      }
    };
  }
  if (typeof main === 'function') {
    const Base = main as EntrypointClass;
    return class extends Base {
      constructor(ctx: unknown, env: unknown, ...rest: unknown[]) {
        super(ctx, userEnv(env), ...rest);
      }
    };
  }
  if (main === null || typeof main !== 'object') return main;
  const handlersOf = main as Record<string, unknown>;
  const wrapped = Object.create(Object.getPrototypeOf(main)) as Record<string, unknown>;
  // Own properties, and handlers a class instance has on its prototype.
  const handlers = ['fetch', 'scheduled', 'queue', 'email', 'tail', 'trace', 'tailStream', 'test'].filter(
    (h) => typeof handlersOf[h] === 'function',
  );
  for (const key of new Set([...Object.keys(main), ...handlers])) {
    const value = handlersOf[key];
    if (typeof value !== 'function') wrapped[key] = value;
    else if (key === 'fetch')
      wrapped.fetch = function (request: Request, env: unknown, ctx: ExecutionContext | undefined) {
        return invocation.run(newInvocation(), () => tracedFetch(value as FetchHandler, main, request, env, ctx));
      };
    else if (key === 'scheduled')
      wrapped.scheduled = function (controller: unknown, env: unknown, ...rest: unknown[]) {
        return invocation.run(newInvocation(), () =>
          tracedScheduled(value as Handler, main, controller, userEnv(env), rest),
        );
      };
    else
      wrapped[key] = function (event: unknown, env: unknown, ...rest: unknown[]) {
        return invocation.run(newInvocation(), () => (value as Handler).call(main, event, userEnv(env), ...rest));
      };
  }
  return wrapped;
}
