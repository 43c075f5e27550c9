import type { Server } from 'node:net';

/** How long requests in flight may take to finish once a listener stops; then their connections go. */
export const STOP_GRACE_MS = 2_000;

/** How a listener's connections are closed while it stops (node:http's own, or a raw listener's). */
export interface Connections {
  /** Closes the connections with no request in flight. */
  closeIdle(): void;
  /** Closes every connection left (the grace is over). */
  closeAll(): void;
  /** Calls closeIdle again on this interval while draining (connections whose last answer went out). */
  recheckIdleMs?: number | undefined;
}

/** node:http's (and node:https') servers close their own idle and remaining connections. */
export function httpConnections(server: { closeIdleConnections(): void; closeAllConnections(): void }): Connections {
  return { closeIdle: () => server.closeIdleConnections(), closeAll: () => server.closeAllConnections() };
}

/**
 * Stops a listener gracefully: it takes no new connections, idle ones close at once, requests in flight get
 * `graceMs` to finish, then what is left is closed. Resolves once the server has closed.
 */
export function stopGracefully(server: Server, connections: Connections, graceMs = STOP_GRACE_MS): Promise<void> {
  return new Promise<void>((resolve) => {
    let recheck: NodeJS.Timeout | undefined;
    server.close(() => {
      clearInterval(recheck);
      resolve();
    });
    connections.closeIdle();
    if (connections.recheckIdleMs !== undefined)
      recheck = setInterval(connections.closeIdle, connections.recheckIdleMs);
    setTimeout(() => {
      clearInterval(recheck);
      connections.closeAll();
    }, graceMs).unref();
  });
}
