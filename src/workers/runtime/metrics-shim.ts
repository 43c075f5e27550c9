import { LATENCY_BUCKETS } from '../../shared/metrics.ts';
import { SCHEDULED_TRACE_SYMBOL } from './trace-shim.ts';
import { R2_CACHE_MODULE } from './local-body-shim.ts';

/** The header a metrics scrape carries to a script's wrapper (with the generation's secret as its value). */
export const METRICS_HEADER = 'x-ledge-metrics';
/** With METRICS_HEADER: run the scheduled() handler instead (JSON `{cron, time}`). */
export const SCHEDULED_HEADER = 'x-ledge-scheduled';
/** With METRICS_HEADER: drop cached R2 objects (body: JSON `{bucket, keys}`, see r2-cache.js). */
export const R2_INVALIDATE_HEADER = 'x-ledge-r2-invalidate';
/** The ping service's path for an R2 invalidation (r2-invalidation.ts). */
export const R2_INVALIDATE_PATH = '/r2-invalidate';

/** What one isolate has counted since it started (see metricsShimSource); latency buckets are non-cumulative. */
export interface IsolateCounts {
  requests: number;
  exceptions: number;
  /** Responses by status class: index 0 is 1xx ... 4 is 5xx. */
  status: number[];
  /** Latency counts per LATENCY_BUCKETS bound, then +Inf. */
  buckets: number[];
  /** Seconds. */
  sum: number;
}

/**
 * Source of a module that counts a script's requests in the isolate's memory: `instrument(main)` wraps
 * the default export's fetch (object or WorkerEntrypoint class). A request carrying METRICS_HEADER with
 * the generation's secret is a scrape (from the ping service, over a unix socket only Ledge reaches)
 * and is answered with the counts as JSON, never reaching the script. Counting is a few additions per
 * request: nothing is written or sent per request (issue 17: the functions benchmark may lose <= 2%).
 * Responses get a cf-ray id (see withRay). Latency is read from Date.now(), which in workerd advances only on I/O (as on Cloudflare): it is the
 * time a handler waited for subrequests and bindings, 0 for pure computation.
 */
export function metricsShimSource(secret: string): string {
  return `import { enableCache, invalidate } from ${JSON.stringify(`./${R2_CACHE_MODULE}`)};
const SECRET = ${JSON.stringify(secret)};
const HEADER = ${JSON.stringify(METRICS_HEADER)};
const BOUNDS = ${JSON.stringify(LATENCY_BUCKETS)};
const counts = { requests: 0, exceptions: 0, status: [0, 0, 0, 0, 0], buckets: new Array(BOUNDS.length + 1).fill(0), sum: 0 };
function observe(started) {
  const seconds = (Date.now() - started) / 1000;
  let i = 0;
  while (i < BOUNDS.length && seconds > BOUNDS[i]) i++;
  counts.buckets[i]++;
  counts.sum += seconds;
}
async function timed(call) {
  const started = Date.now();
  counts.requests++;
  let response;
  try {
    response = await call();
  } catch (error) {
    counts.exceptions++;
    observe(started);
    throw error;
  }
  const cls = Math.floor((response?.status ?? 500) / 100) - 1;
  if (cls >= 0 && cls < 5) counts.status[cls]++;
  observe(started);
  return withRay(response);
}
// Every function response carries a ray id as on Cloudflare (cf-ray: 16 hex digits and a location):
// this isolate's random prefix and a counter, so it costs no random bytes per request.
let rayPrefix;
let raySeq = 0;
function withRay(response) {
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
const isScrape = (request) => request.headers.get(HEADER) === SECRET;
const scrape = () => new Response(JSON.stringify(counts), { headers: { 'content-type': 'application/json' } });
// A Cron Trigger run (cron-service.ts via the ping service): the scheduled() handler is called here,
// with a controller of the same shape, so workerd needs no experimental flag.
async function runScheduled(request, handler) {
  const { cron, time } = JSON.parse(request.headers.get(${JSON.stringify(SCHEDULED_HEADER)}));
  const controller = { scheduledTime: time, cron, type: 'scheduled', noRetry() {} };
  // The console calls the trace shim collected during the run (tail sessions show them with the event).
  const logs = () => controller[Symbol.for(${JSON.stringify(SCHEDULED_TRACE_SYMBOL)})]?.logs ?? [];
  try {
    if (typeof handler !== 'function') throw new Error('The Worker has no scheduled() handler.');
    await handler(controller);
    return Response.json({ outcome: 'ok', logs: logs() });
  } catch (error) {
    console.error('scheduled() threw: ' + (error?.stack ?? String(error)));
    const isError = error !== null && typeof error === 'object';
    const exception = {
      name: isError && typeof error.name === 'string' ? error.name : 'Error',
      message: isError && 'message' in error ? String(error.message) : String(error),
      stack: isError && typeof error.stack === 'string' ? error.stack.split('\\n').filter((line) => !/__ledge_(console|main|metrics)\\.js/.test(line)).join('\\n') : undefined,
      timestamp: Date.now(),
    };
    return Response.json({ outcome: 'exception', error: String(error?.message ?? error), logs: logs(), exception });
  }
}
// The server's invalidation of cached R2 objects: applied before it is answered (the write waits for it).
async function applyInvalidation(request) {
  let message;
  try { message = await request.json(); } catch { message = null; }
  invalidate(message);
  return new Response(null, { status: 204 });
}
const internal = (request, scheduled) =>
  request.headers.has(${JSON.stringify(R2_INVALIDATE_HEADER)})
    ? applyInvalidation(request)
    : request.headers.has(${JSON.stringify(SCHEDULED_HEADER)}) ? runScheduled(request, scheduled) : scrape();
export function instrument(main) {
  if (typeof main === 'function' && typeof main.prototype?.fetch === 'function') {
    enableCache();
    return class extends main {
      fetch(request, ...rest) {
        if (isScrape(request)) return internal(request, this.scheduled && ((c) => this.scheduled(c)));
        return timed(() => super.fetch(request, ...rest));
      }
    };
  }
  if (main !== null && typeof main === 'object' && (typeof main.fetch === 'function' || typeof main.scheduled === 'function')) {
    enableCache();
    const fetch = main.fetch;
    return Object.assign(Object.create(Object.getPrototypeOf(main)), main, {
      fetch(request, env, ctx) {
        if (isScrape(request)) return internal(request, main.scheduled && ((c) => main.scheduled.call(this, c, env, ctx)));
        // A Worker with only a scheduled() handler answers HTTP as workerd does without a fetch handler.
        if (typeof fetch !== 'function') throw new Error('Handler does not export a fetch() function.');
        return timed(() => fetch.call(this, request, env, ctx));
      },
    });
  }
  return main;
}
`;
}

/**
 * The ping service of a process that runs functions: `/` answers the watchdog at once; `/metrics` asks
 * every routed script (SCRIPTS: binding name -> account and script) for its counts and answers them
 * as one JSON array (a script without a fetch handler answers an error, and is left out);
 * `/scheduled?a=&s=&cron=&time=` has a script's wrapper run its scheduled() handler.
 */
export function pingSource(secret: string): string {
  return `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/scheduled') {
      // A Cron Trigger (cron-service.ts): runs the script's scheduled() handler, answers its outcome.
      const q = url.searchParams;
      const binding = Object.keys(env.SCRIPTS ?? {}).find((b) => env.SCRIPTS[b].a === q.get('a') && env.SCRIPTS[b].s === q.get('s'));
      if (!binding) return Response.json({ outcome: 'not_loaded' }, { status: 404 });
      const headers = { ${JSON.stringify(METRICS_HEADER)}: ${JSON.stringify(secret)}, ${JSON.stringify(SCHEDULED_HEADER)}: JSON.stringify({ cron: q.get('cron') ?? '', time: Number(q.get('time')) }) };
      try {
        return Response.json(await (await env[binding].fetch('http://scheduled/', { method: 'POST', headers })).json());
      } catch (error) {
        return Response.json({ outcome: 'error', error: String(error?.message ?? error) });
      }
    }
    if (url.pathname === ${JSON.stringify(R2_INVALIDATE_PATH)}) {
      // Cached R2 objects changed (r2-invalidation.ts): every script of this process drops them before the answer.
      const body = await request.text();
      const headers = { ${JSON.stringify(METRICS_HEADER)}: ${JSON.stringify(secret)}, ${JSON.stringify(R2_INVALIDATE_HEADER)}: '1' };
      await Promise.allSettled(Object.keys(env.SCRIPTS ?? {}).map(async (binding) => {
        const response = await env[binding].fetch('http://r2-invalidate/', { method: 'POST', headers, body });
        await response.body?.cancel();
      }));
      // A script whose handlers the metrics module does not wrap never caches (r2-cache.js enableCache) and
      // cannot answer; the others have applied it once their answer is in.
      return new Response(null, { status: 204 });
    }
    if (url.pathname !== '/metrics') return new Response(null, { status: 204 });
    const out = [];
    for (const [binding, id] of Object.entries(env.SCRIPTS ?? {})) {
      try {
        const response = await env[binding].fetch('http://metrics/', { headers: { ${JSON.stringify(METRICS_HEADER)}: ${JSON.stringify(secret)} } });
        if (response.ok && response.headers.get('content-type') === 'application/json') out.push({ ...id, ...(await response.json()) });
      } catch {}
    }
    return Response.json(out);
  },
};
`;
}
