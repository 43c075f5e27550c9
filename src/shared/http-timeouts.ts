/**
 * How long the HTTP servers wait on slow or idle clients. Each is a setting in milliseconds (LEDGE_HTTP_*_MS,
 * src/server/settings/schema.ts); the defaults are chosen for the API, where 5 GiB object uploads are
 * normal:
 * - headers: 30 s to send the request line and headers (Node's default is 60 s), so half-open and
 *   slowloris connections go away quickly;
 * - request: 2 h for a whole request, enough for a 5 GiB upload at 0.75 MiB/s (Node's default of
 *   5 min cut uploads slower than 17 MiB/s);
 * - idle: 120 s without a byte either way closes a connection mid-request (a stalled upload or a
 *   client that stopped reading); streamed responses that wait longer send heartbeats (tail);
 * - keepAlive: 65 s before an idle kept-alive connection is closed (above the 60 s that common
 *   proxies and load balancers keep theirs, so they are never the one surprised).
 */
export interface HttpTimeouts {
  headersMs: number;
  requestMs: number;
  idleMs: number;
  keepAliveMs: number;
}

export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = {
  headersMs: 30_000,
  requestMs: 2 * 3600_000,
  idleMs: 120_000,
  keepAliveMs: 65_000,
};

/**
 * How often the bounds are checked: Node's default of 30 s would let a 30 s headers timeout run to 60 s
 * (node:http's `connectionsCheckingInterval`; the raw data plane's sweep, proxy/server.ts).
 */
export function checkingIntervalMs(headersMs: number): number {
  return Math.max(50, Math.min(1_000, Math.floor(headersMs / 4)));
}
