import { env as platformEnv } from 'cloudflare:workers';
import {
  METRICS_HEADER,
  METRICS_SECRET_BINDING,
  PLATFORM_FRAME,
  R2_INVALIDATE_HEADER,
  RESPONSE_HEADER_LIMIT_BYTES,
  SCHEDULED_HEADER,
  SCHEDULED_TRACE_SYMBOL,
  takeBinding,
  type IsolateCounts,
} from './contract.js';
import { LATENCY_BUCKETS } from './params.js';
import { enableCache, invalidate } from './r2-cache.js';

/**
 * Counts a script's requests in the isolate's memory: `instrument(main)` wraps the default export's fetch
 * (object or WorkerEntrypoint class). A request carrying METRICS_HEADER with the generation's secret is a
 * scrape (from the ping service, over a unix socket only Ledge reaches) and is answered with the counts as
 * JSON, never reaching the script. Counting is a few additions per request: nothing is written or sent per
 * request (metrics are always on, so they may cost the functions benchmark no more than 2%).
 * Responses get a cf-ray id (see withRay).
 * Latency is read from Date.now(), which in workerd advances only on I/O (as on Cloudflare): it is the time
 * a handler waited for subrequests and bindings, 0 for pure computation.
 */

const BOUNDS = LATENCY_BUCKETS;
// Kept in this module only: whoever has it can read the counts and run scheduled() (a hidden text binding).
const METRICS_SECRET = takeBinding(platformEnv, METRICS_SECRET_BINDING) as string | undefined;
const counts: IsolateCounts = {
  requests: 0,
  exceptions: 0,
  status: [0, 0, 0, 0, 0],
  buckets: new Array<number>(BOUNDS.length + 1).fill(0),
  sum: 0,
};
function observe(started: number): void {
  const seconds = (Date.now() - started) / 1000;
  let i = 0;
  while (i < BOUNDS.length && seconds > BOUNDS[i]!) i++;
  counts.buckets[i]!++;
  counts.sum += seconds;
}
async function timed(call: () => unknown): Promise<unknown> {
  const started = Date.now();
  counts.requests++;
  let response: unknown;
  try {
    response = withinHeaderLimit(await call());
  } catch (error) {
    counts.exceptions++;
    observe(started);
    throw error;
  }
  const cls = Math.floor(((response as Response | undefined)?.status ?? 500) / 100) - 1;
  if (cls >= 0 && cls < 5) counts.status[cls]!++;
  observe(started);
  return withRay(response);
}
/** An answer whose headers are over the limit, replaced by one that says so (and logged, so tails show why). */
function withinHeaderLimit(response: unknown): unknown {
  if (!(response instanceof Response) || response.status === 101) return response;
  let bytes = 0;
  // Each header line on the wire: name, ": ", value, CRLF (header values are byte strings: length is bytes).
  // forEach is one call into workerd; iterating the headers made an iterator and an array per header, ~8% of
  // a Durable Object round trip's CPU in the script's process (perf, bench/durable-objects).
  response.headers.forEach((value, name) => {
    bytes += name.length + value.length + 4;
  });
  if (bytes <= RESPONSE_HEADER_LIMIT_BYTES) return response;
  const message = `The function's response headers total ${bytes} bytes, over the limit of ${RESPONSE_HEADER_LIMIT_BYTES} bytes (128 KB): send less in headers (a body has no such limit).`;
  console.error(message);
  response.body?.cancel().catch(() => undefined);
  return new Response(`${message}\n`, { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' } });
}
// Every function response carries a ray id as on Cloudflare (cf-ray: 16 hex digits and a location):
// this isolate's random prefix and a counter, so it costs no random bytes per request.
let rayPrefix: string | undefined;
let raySeq = 0;
function withRay(response: unknown): unknown {
  if (!(response instanceof Response) || response.headers.has('cf-ray')) return response;
  rayPrefix ??= [...crypto.getRandomValues(new Uint8Array(4))].map((b) => b.toString(16).padStart(2, '0')).join('');
  const ray = rayPrefix + (++raySeq).toString(16).padStart(8, '0') + '-LDG';
  try {
    response.headers.set('cf-ray', ray);
    return response;
  } catch {
    // Immutable headers (a response passed through from fetch()): a copy carries the id.
    if (response.status === 101 || response.webSocket) return response;
    const copy = new Response(response.body, response);
    copy.headers.set('cf-ray', ray);
    return copy;
  }
}
const isScrape = (request: Request) =>
  METRICS_SECRET !== undefined && request.headers.get(METRICS_HEADER) === METRICS_SECRET;
const scrape = () => new Response(JSON.stringify(counts), { headers: { 'content-type': 'application/json' } });
type Scheduled = ((controller: object) => unknown) | undefined | false;
// A Cron Trigger run (cron-service.ts via the ping service): the scheduled() handler is called here,
// with a controller of the same shape, so workerd needs no experimental flag.
async function runScheduled(request: Request, handler: Scheduled): Promise<Response> {
  const { cron, time } = JSON.parse(request.headers.get(SCHEDULED_HEADER)!) as { cron: string; time: number };
  const controller: Record<PropertyKey, unknown> = { scheduledTime: time, cron, type: 'scheduled', noRetry() {} };
  // The console calls the trace module collected during the run (tail sessions show them with the event).
  const logs = () => (controller[Symbol.for(SCHEDULED_TRACE_SYMBOL)] as { logs: unknown[] } | undefined)?.logs ?? [];
  try {
    if (typeof handler !== 'function') throw new Error('The Worker has no scheduled() handler.');
    await handler(controller);
    return Response.json({ outcome: 'ok', logs: logs() });
  } catch (error) {
    const fields = error as { name?: unknown; message?: unknown; stack?: unknown } | null;
    console.error('scheduled() threw: ' + (fields?.stack ?? String(error)));
    const isError = error !== null && typeof error === 'object';
    const exception = {
      name: isError && typeof fields!.name === 'string' ? fields!.name : 'Error',
      message: isError && 'message' in fields! ? String(fields!.message) : String(error),
      stack:
        isError && typeof fields!.stack === 'string'
          ? fields!.stack
              .split('\n')
              .filter((line) => !PLATFORM_FRAME.test(line))
              .join('\n')
          : undefined,
      timestamp: Date.now(),
    };
    return Response.json({ outcome: 'exception', error: String(fields?.message ?? error), logs: logs(), exception });
  }
}
// The server's invalidation of cached R2 objects: applied before it is answered (the write waits for it).
async function applyInvalidation(request: Request): Promise<Response> {
  let message: unknown;
  try {
    message = await request.json();
  } catch {
    message = null;
  }
  invalidate(message);
  return new Response(null, { status: 204 });
}
const internal = (request: Request, scheduled: Scheduled) =>
  request.headers.has(R2_INVALIDATE_HEADER)
    ? applyInvalidation(request)
    : request.headers.has(SCHEDULED_HEADER)
      ? runScheduled(request, scheduled)
      : scrape();

type EntrypointClass = new (...args: unknown[]) => {
  fetch?(request: Request, ...rest: unknown[]): unknown;
  scheduled?: (controller: object) => unknown;
};
type Handlers = {
  fetch?: (this: unknown, request: Request, env: unknown, ctx: unknown) => unknown;
  scheduled?: (this: unknown, controller: object, env: unknown, ctx: unknown) => unknown;
};

/**
 * The event handlers a Worker may export without fetch() (a queue consumer, a Cron Trigger, a tail consumer).
 * Such a Worker is wrapped all the same: the ping service's scrapes and invalidations reach every loaded script
 * by fetch, and without a fetch handler workerd would log "Received a FetchEvent but we lack a handler" for them.
 */
const EVENT_HANDLERS = ['scheduled', 'queue', 'tail', 'trace', 'email'] as const;
const exportsHandler = (target: unknown): boolean =>
  target !== null &&
  typeof target === 'object' &&
  EVENT_HANDLERS.some((name) => typeof (target as Record<string, unknown>)[name] === 'function');

// A Worker without fetch() answers HTTP as workerd does: with this exception.
const noFetch = () => {
  throw new Error('Handler does not export a fetch() function.');
};

/** Wraps the default export so its requests are counted, and a scrape or a scheduled() call is answered. */
export function instrument(main: unknown): unknown {
  if (typeof main === 'function' && (typeof main.prototype?.fetch === 'function' || exportsHandler(main.prototype))) {
    const Base = main as EntrypointClass;
    if (typeof main.prototype.fetch === 'function') enableCache();
    return class extends Base {
      override fetch(request: Request, ...rest: unknown[]) {
        if (isScrape(request)) return internal(request, this.scheduled && ((c) => this.scheduled!(c)));
        if (typeof super.fetch !== 'function') return noFetch();
        return timed(() => super.fetch!(request, ...rest));
      }
    };
  }
  const handlers = main as Handlers | null;
  if (
    handlers !== null &&
    typeof handlers === 'object' &&
    (typeof handlers.fetch === 'function' || exportsHandler(handlers))
  ) {
    // The cache needs its invalidations answered: only where they were before (fetch or scheduled).
    if (typeof handlers.fetch === 'function' || typeof handlers.scheduled === 'function') enableCache();
    const fetch = handlers.fetch;
    return Object.assign(Object.create(Object.getPrototypeOf(handlers)), handlers, {
      fetch(this: unknown, request: Request, env: unknown, ctx: unknown) {
        if (isScrape(request))
          return internal(request, handlers.scheduled && ((c) => handlers.scheduled!.call(this, c, env, ctx)));
        if (typeof fetch !== 'function') return noFetch();
        return timed(() => fetch.call(this, request, env, ctx));
      },
    });
  }
  return main;
}
