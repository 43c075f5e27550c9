/**
 * The one module of the platform's that is generated: `__ledge/params.js`, written per script by
 * isolate-modules.ts (paramsModule) with the values the platform's modules are parameterised by. User code
 * can import it too: nothing in it is secret (see METRICS_SECRET_BINDING in contract.ts).
 */
/** The script's account and name, which tag its console lines and trace lines. */
export declare const ACCOUNT_ID: string;
export declare const SCRIPT_NAME: string;
/** Latency bucket bounds in seconds (shared/metrics.ts LATENCY_BUCKETS). */
export declare const LATENCY_BUCKETS: readonly number[];
/** fetch() calls one invocation may make. */
export declare const SUBREQUEST_LIMIT: number;
/** The reserved metadata key a hidden get names a blob file under; null: no local reads. */
export declare const LOCAL_BODY_KEY: string | null;
/** Each bucket binding of the user's that reads bodies locally, and its slot. */
export declare const LOCAL_BUCKETS: Readonly<Record<string, number>>;
/** With an isolate cache (r2-cache.ts): the server's cacheable mark; null: no cache. */
export declare const CACHE_KEY: string | null;
/** Slot -> `account/bucket`, as the server's invalidations name buckets. */
export declare const SLOT_BUCKETS: Readonly<Record<number, string>>;
