import { createServer as createPlainServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { SecureContextOptions, TLSSocket } from 'node:tls';
import { checkingIntervalMs, type HttpTimeouts } from '../http-timeouts.ts';

/**
 * TLS for a listener (the engine's slot for HTTPS): a default certificate, and/or a callback that picks one
 * per server name (SNI). Where the certificates come from is the caller's: the engine only serves them.
 */
export interface ListenerTls extends Pick<SecureContextOptions, 'key' | 'cert' | 'ca'> {
  /** The certificate for a server name (a TLS client hello's SNI); `undefined` keeps the default one. */
  SNICallback?: (serverName: string, done: (error: Error | null, context?: unknown) => void) => void;
}

export interface HttpServerOptions {
  /**
   * The bounds on slow and idle clients (http-timeouts.ts says why each). A bound left out keeps Node's
   * default (the R2 wire backend, whose only client is the runtime, sets the two a 5 GiB put needs).
   */
  timeouts: Partial<HttpTimeouts>;
  /** Serve HTTPS instead of HTTP. */
  tls?: ListenerTls | undefined;
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * A node:http server (node:https with `tls`) with the listener's timeouts; the caller listens with
 * listen.ts and stops with stop.ts. The handler is the server's own request listener, unwrapped: the
 * engine adds no work per request.
 */
export function createHttpServer(options: HttpServerOptions, handler: RequestHandler): Server {
  const { timeouts, tls } = options;
  const serverOptions = {
    ...(timeouts.headersMs === undefined
      ? {}
      : {
          headersTimeout: timeouts.headersMs,
          connectionsCheckingInterval: checkingIntervalMs(timeouts.headersMs),
        }),
    ...(timeouts.requestMs === undefined ? {} : { requestTimeout: timeouts.requestMs }),
    ...(timeouts.keepAliveMs === undefined ? {} : { keepAliveTimeout: timeouts.keepAliveMs }),
  };
  // node:https' server is node:http's over TLS sockets (same events, same connection handling).
  const server = tls
    ? (createTlsServer({ ...serverOptions, ...tls } as object, handler) as unknown as Server)
    : createPlainServer(serverOptions, handler);
  if (timeouts.idleMs !== undefined) server.setTimeout(timeouts.idleMs);
  return server;
}

/** The TLS socket under a request served over HTTPS (undefined over HTTP). */
export function tlsSocketOf(req: IncomingMessage): TLSSocket | undefined {
  return 'encrypted' in req.socket ? (req.socket as TLSSocket) : undefined;
}
