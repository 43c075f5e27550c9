import type { Server, ServerOptions } from 'node:http';

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

/** Options for `http.createServer`: Node checks the headers and request timeouts on this interval. */
export function httpServerOptions(timeouts: HttpTimeouts): ServerOptions {
  return {
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    // Node's default is 30 s, which would let a 30 s headers timeout run to 60 s.
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(timeouts.headersMs / 4))),
  };
}

/** The idle timeout (socket inactivity) is set on the server once it exists. */
export function applyIdleTimeout(server: Server, timeouts: HttpTimeouts): void {
  server.setTimeout(timeouts.idleMs);
}
