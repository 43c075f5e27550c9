import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { clip, CommonErrors, isLedgeError, LedgeError, MAX_ERROR_MESSAGE, type ErrorDetail } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { failureBody } from '../api-kit/envelope.ts';

/**
 * The one place where failures become HTTP responses. Client errors carry `x-should-retry: false`
 * because the official SDK otherwise retries 408/409/429 and 5xx answers twice.
 */
export function errorResponse(error: unknown, logger: Logger, requestId?: string, request?: Request): Response {
  const ledgeError = request && clientWentAway(error, request) ? CommonErrors.clientClosed() : toLedgeError(error);
  // Nobody is left to read this answer: a routine event, not a server fault.
  if (ledgeError.status === 499) logger.debug('client went away mid-request', { request_id: requestId });
  // 501 answers a request for a feature Ledge does not have (wrangler tail): no fault to investigate.
  else if (ledgeError.status >= 500 && ledgeError.status !== 501) {
    logger.error('request failed', { request_id: requestId, err: error });
  }
  const headers: Record<string, string> = { 'content-type': 'application/json', ...ledgeError.headers };
  if (ledgeError.status < 500) headers['x-should-retry'] = 'false';
  // A refused body is left unread: the connection cannot carry another request after this answer.
  if (ledgeError.status === 413) headers['connection'] = 'close';
  return new Response(JSON.stringify(failureBody([capped(ledgeError.toDetail())])), {
    status: ledgeError.status,
    headers,
  });
}

function toLedgeError(error: unknown): LedgeError {
  if (isLedgeError(error)) return error;
  // A body parser wraps the failure of the stream it read (our size limit among them).
  if (error instanceof Error && isLedgeError(error.cause)) return error.cause;
  // Hono's own helpers (body parsing) signal client mistakes this way: keep their status, never a 500.
  if (error instanceof HTTPException) {
    return new LedgeError(error.status, error.status === 413 ? 1013 : 1001, error.message || 'Invalid request');
  }
  return CommonErrors.internal(error);
}

/**
 * A client that disconnects mid-body aborts the request's signal (and `limitedBody` fails with 499);
 * a stream read directly fails with "aborted" / ECONNRESET. No one is left to answer.
 */
function clientWentAway(error: unknown, request: Request): boolean {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (isLedgeError(current)) return current.status === 499;
    const code = (current as NodeJS.ErrnoException).code;
    if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || current.message === 'aborted') return true;
  }
  return request.signal.aborted;
}

/** Backstop for messages that quote input at length (see `clip`): no answer echoes a whole body back. */
function capped(detail: ErrorDetail): ErrorDetail {
  return detail.message.length > MAX_ERROR_MESSAGE
    ? { ...detail, message: clip(detail.message, MAX_ERROR_MESSAGE) }
    : detail;
}

/** Hono's notFound hook: throws 7003 so the answer goes through `errorResponse` like every other failure. */
export function throwRouteNotFound(c: Context): never {
  throw CommonErrors.routeNotFound(new URL(c.req.url).pathname);
}
