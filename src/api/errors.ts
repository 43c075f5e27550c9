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
  // Hono's own helpers (body parsing) signal client mistakes this way: keep their status, never a 500.
  if (error instanceof HTTPException) {
    return new LedgeError(error.status, error.status === 413 ? 1013 : 1001, error.message || 'Invalid request');
  }
  return CommonErrors.internal(error);
}

/** Hono's notFound hook: throws 7003 so the answer goes through `errorResponse` like every other failure. */
export function throwRouteNotFound(c: Context): never {
  throw CommonErrors.routeNotFound(new URL(c.req.url).pathname);
}
