/**
 * What the server and the modules that run inside workerd agree on: markers of workerd's stdout lines,
 * header and binding names, bounds. Imported by both sides (it is plain constants and types, so it
 * typechecks as Node code and as worker code, and is loaded into workerd as `__ledge/contract.js`).
 */

/** Marks the stdout lines of workerd that carry a function's console output (see log-hub.ts). */
export const LOG_MARKER = '\u0001ledge-log ';
/** Marks the stdout lines of workerd that carry a traced request (see tail-traces.ts). */
export const TRACE_MARKER = '\u0001ledge-trace ';

/**
 * Console output one invocation may write, as on Cloudflare (log-limits.ts says why): past it, one note
 * says the rest is not recorded.
 */
export const LOG_BYTES_PER_INVOCATION = 256 * 1024;
/** Console output outside any invocation (module top level, unwrapped handlers) gets this much a second. */
export const AMBIENT_LOG_WINDOW_MS = 1_000;
/** What a console line says in place of the lines an invocation wrote past its budget. */
export const LOG_TRUNCATED_NOTE = `[ledge] console output of this invocation passed ${LOG_BYTES_PER_INVOCATION / 1024} KB: the rest of it is not recorded`;

/**
 * The request header that hands a request to a script reached through a Workers route or Custom Domain:
 * the traffic port sets it to the entry router's key for that script (script.ts routedScriptKey, which holds
 * a per-installation secret, so a client cannot name a script that is not on workers.dev), keeping the Host
 * the client sent. The router removes it before the script sees the request.
 */
export const ROUTED_SCRIPT_HEADER = 'x-ledge-routed-script';

/**
 * The platform's binding names (any case), and its module names in lower case (`__ledge_main.js`,
 * `__ledge/*.js`). Users cannot name a binding, secret or module this way (upload.ts), and the platform's
 * modules take these bindings out of `env` before any user code runs (trace.ts and r2.ts).
 */
export const RESERVED_BINDING_PREFIX = '__LEDGE';
/** The hidden r2Bucket binding whose gets may be answered with a blob file (R2WireBackend.localReads). */
export const localBucketBinding = (slot: number): string => `${RESERVED_BINDING_PREFIX}_R2_${slot}`;
/** The hidden read-only disk service on that bucket's blob directory. */
export const localBlobsBinding = (slot: number): string => `${RESERVED_BINDING_PREFIX}_BLOBS_${slot}`;
/** The binding (hidden from the user's `env`) that reads the script's own tail flag (see tail-traces.ts). */
export const TAIL_FLAG_BINDING = `${RESERVED_BINDING_PREFIX}_TAIL_FLAGS`;
/**
 * Values the platform's modules must keep from user code (which can import any module of its worker, so
 * they cannot be exports of __ledge/params.js): each arrives as a hidden binding that its module takes out
 * of the env at load, before any user module runs. The generation's metrics secret (metrics.ts), and the
 * egress lists, which name the host's own addresses (egress.ts).
 */
export const METRICS_SECRET_BINDING = `${RESERVED_BINDING_PREFIX}_METRICS_SECRET`;
export const EGRESS_BINDING = `${RESERVED_BINDING_PREFIX}_EGRESS`;
/** Take a hidden binding out of the module env (cloudflare:workers' env), so user code never sees it. */
export function takeBinding(env: unknown, name: string): unknown {
  const bindings = env as Record<string, unknown> | null;
  if (bindings === null || typeof bindings !== 'object' || !(name in bindings)) return undefined;
  const value = bindings[name];
  delete bindings[name];
  return value;
}
/** The flag's file name in its script's own flag directory (tail-traces.ts scriptFlagDir). */
export const TAIL_FLAG_FILE = 'flag';
/** The tail flag's text when the events must carry the client's peer address (a session filters by it). */
export const TAIL_FLAG_PEER = 'peer';
/** How long an isolate trusts what it last read about its script's tail flag. */
export const TAIL_FLAG_TTL_MS = 1_000;
/**
 * How a `script_name` Durable Object binding names the object on its host's gate (object-gate.ts): a header
 * on `fetch`, an argument on RPC calls. `name` when the id came from a name, so the host derives the same id.
 */
export const OBJECT_TARGET_HEADER = 'x-ledge-object';
export interface ObjectTarget {
  id: string;
  name: string | null;
}
/** The symbol (Symbol.for) under which a scheduled() run's console calls wait for the metrics module. */
export const SCHEDULED_TRACE_SYMBOL = 'ledge.scheduledTrace';

/** The header a metrics scrape carries to a script's wrapper (with the generation's secret as its value). */
export const METRICS_HEADER = 'x-ledge-metrics';
/** With METRICS_HEADER: run the scheduled() handler instead (JSON `{cron, time}`). */
export const SCHEDULED_HEADER = 'x-ledge-scheduled';

/** Frames of the platform's own modules, left out of the stacks a user sees (trace.ts, metrics.ts). */
export const PLATFORM_FRAME = /__ledge(?:_main|\/(?:console|trace|metrics|subrequests|host-guard))\.js/;

/** What one isolate has counted since it started (see metrics.ts); latency buckets are non-cumulative. */
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

/** Set when objects may be cached in the isolate (r2-cache.ts): the server's mark, and each slot's bucket. */
export interface LocalCache {
  metadataKey: string;
  /** Slot -> `account/bucket`, as the server's invalidations name buckets. */
  buckets: Record<number, string>;
}

/** With METRICS_HEADER: drop cached R2 objects (body: JSON `{bucket, keys}`, see r2-cache.ts). */
export const R2_INVALIDATE_HEADER = 'x-ledge-r2-invalidate';
/** The ping service's path for an R2 invalidation (r2-invalidation.ts). */
export const R2_INVALIDATE_PATH = '/r2-invalidate';

/** One egress rule as the egress module compares it: an IPv4 rule in the IPv4-mapped space, base in hex. */
export interface EgressRule {
  text: string;
  v4: boolean;
  base: string;
  bits: number;
}

/**
 * Response headers one function answer may carry in total, Cloudflare's documented limit (128 KB). Past it the
 * answer is a 500 that says so: unchecked, a few hundred KB more overflowed workerd's own header buffer between the
 * front and the script's process, and the client got "1102 exceeded resource limits" for a limit never hit.
 */
export const RESPONSE_HEADER_LIMIT_BYTES = 128 * 1024;
