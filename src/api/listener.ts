import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { getRequestListener, RequestError } from '@hono/node-server';
import { clip, LedgeError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { failureBody } from '../api-kit/envelope.ts';
import { errorResponse } from './errors.ts';

/**
 * The node:http listener for the API app. The adapter refuses some request targets before the app
 * sees them (`//x`, a missing Host): its own answer is an empty 400, this one is the v4 envelope.
 */
export function apiRequestListener(
  fetch: (request: Request) => Response | Promise<Response>,
  options: { hostname: string; logger: Logger },
): (incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void> {
  const listener = getRequestListener(fetch, {
    hostname: options.hostname,
    errorHandler: (error) =>
      errorResponse(
        error instanceof RequestError ? new LedgeError(400, 1001, `Invalid request: ${clip(error.message)}`) : error,
        options.logger,
      ),
  });
  return (incoming, outgoing) => {
    outgoing.once('prefinish', () => lingerIfRefused(incoming, outgoing));
    return listener(incoming, outgoing);
  };
}

/** How long a connection whose body was refused is still read (and discarded) after the answer. */
const LINGER_MS = 2_000;

/**
 * A body refused early (413, `connection: close`) is still streaming in when the answer goes out. Closed
 * at once, the socket has unread bytes, so the kernel resets the connection, and a client still writing
 * gets EPIPE or ECONNRESET instead of reading the answer. As nginx's lingering close does, the answer is
 * followed by a FIN while what the client still sends is read and discarded (node:http dumps the rest of
 * the body) until it closes or LINGER_MS pass. node:http closes such a socket with `destroySoon()` once the
 * response finishes: this socket's own is replaced before that.
 */
function lingerIfRefused(incoming: IncomingMessage, outgoing: ServerResponse): void {
  // The adapter writes headers with writeHead(), so the answer's `connection: close` shows only here.
  if (incoming.complete || outgoing.shouldKeepAlive) return;
  const socket = incoming.socket;
  socket.destroySoon = () => {
    socket.end();
    const deadline = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once('close', () => clearTimeout(deadline));
  };
}

const PROTOCOL_ERRORS: Record<string, [status: number, reason: string, message: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'The request headers are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request was not received in time.'],
  HPE_HEADERS_TIMEOUT: [408, 'Request Timeout', 'The request headers were not received in time.'],
};

/**
 * Requests that node:http refuses while parsing (an invalid header character, headers too large, the
 * headers timeout) get Node's bare status line by default: answer them in the v4 envelope too.
 */
export function answerProtocolErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, reason, message] = PROTOCOL_ERRORS[error.code ?? ''] ?? [
      400,
      'Bad Request',
      'The request is not valid HTTP/1.1.',
    ];
    const body = JSON.stringify(failureBody([{ code: status === 400 ? 1001 : 10000 + status, message }]));
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\nx-should-retry: false\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}
