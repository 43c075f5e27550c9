import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { getRequestListener, RequestError } from '@hono/node-server';
import { clip, LedgeError } from '../shared/errors.ts';
import { lingerIfRefused } from '../shared/http-listener/lingering-close.ts';
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
  // A refused body's connection closes lingering (lingering-close.ts).
  return (incoming, outgoing) => {
    outgoing.once('prefinish', () => lingerIfRefused(incoming, outgoing));
    return listener(incoming, outgoing);
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
