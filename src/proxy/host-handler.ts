import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Hostnames a ProxyServer serves with something other than its router (on the traffic port: public R2
 * buckets), injected by the platform so the data plane never imports what serves them. `claims` is asked
 * for every request before routing, so it must answer from memory; a claimed request is served on
 * node:http (its connection is handed over, as upgrades are) by `handle`.
 */
export interface HostHandler {
  /** `hostname`: lowercase, without port or trailing dot; `target`: the request target as sent. */
  claims(hostname: string, target: string): boolean;
  /** `next`: serve it as if unclaimed (a handler that claims a host for a few paths only). */
  handle(req: IncomingMessage, res: ServerResponse, next: () => void): void;
}
