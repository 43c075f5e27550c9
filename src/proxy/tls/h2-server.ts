import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest } from 'node:http2';
import type { HttpTimeouts } from '../../shared/http-timeouts.ts';

/**
 * The HTTP/2 side of the TLS port: a node:http2 server that never listens; TLS sockets whose ALPN chose
 * h2 are given to it (`emit('secureConnection')`, as a listening one does). Its requests go through the compatibility API to the same
 * handler node:http's hand-off uses (host handler or proxy), so what HTTP/1.1 serves HTTP/2 serves: the
 * request is read as an IncomingMessage with Host taken from `:authority`, and pseudo-headers are never
 * forwarded (forwarded-headers.ts).
 */
export function createH2Server(
  timeouts: HttpTimeouts,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Http2SecureServer {
  const server = createSecureServer({}, (req, res) => {
    // HTTP/2 clients send :authority instead of Host (RFC 9113 8.3.1); routing reads Host.
    const headers = req.headers;
    if (headers.host === undefined && headers[':authority'] !== undefined) headers.host = headers[':authority'];
    handle(req as unknown as IncomingMessage, asHttp1Response(req, res) as unknown as ServerResponse);
  });
  server.setTimeout(timeouts.idleMs);
  return server;
}

/** HTTP/2 has no reason phrase: node:http2 warns on one, so writeHead's message argument is dropped. */
function asHttp1Response<T extends { writeHead: (...args: never[]) => unknown }>(_req: Http2ServerRequest, res: T): T {
  const writeHead = res.writeHead.bind(res) as (status: number, ...rest: unknown[]) => unknown;
  (res as unknown as { writeHead: unknown }).writeHead = (status: number, ...rest: unknown[]) =>
    typeof rest[0] === 'string' ? writeHead(status, ...rest.slice(1)) : writeHead(status, ...rest);
  return res;
}
