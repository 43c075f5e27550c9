import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { CommonErrors, isLedgeError, LedgeError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { failureBody } from './envelope.ts';

/**
 * The one place where failures become HTTP responses. Client errors carry `x-should-retry: false`
 * because the official SDK otherwise retries 408/409/429 and 5xx answers twice.
 */
export function errorResponse(error: unknown, logger: Logger, requestId?: string): Response {
  const ledgeError = toLedgeError(error);
  if (ledgeError.status >= 500) logger.error('request failed', { request_id: requestId, err: error });
  const headers: Record<string, string> = { 'content-type': 'application/json', ...ledgeError.headers };
  if (ledgeError.status < 500) headers['x-should-retry'] = 'false';
  return new Response(JSON.stringify(failureBody([ledgeError.toDetail()])), { status: ledgeError.status, headers });
}

function toLedgeError(error: unknown): LedgeError {
  if (isLedgeError(error)) return error;
  if (error instanceof HTTPException) {
    if (error.status === 413) return CommonErrors.payloadTooLarge(0);
    return new LedgeError(error.status, 10000 + error.status, error.message || 'Request failed');
  }
  return CommonErrors.internal(error);
}

export function notFoundResponse(c: Context): Response {
  const url = new URL(c.req.url);
  throw CommonErrors.routeNotFound(url.pathname);
}
