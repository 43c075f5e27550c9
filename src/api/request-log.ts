import type { MiddlewareHandler } from 'hono';
import { newRequestId } from '../shared/ids.ts';
import type { Logger } from '../shared/logger.ts';
import type { AppEnv } from './context.ts';

/** Gives every request an id (echoed as `x-request-id`) and writes one structured log line per request. */
export function requestLog(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const requestId = newRequestId();
    c.set('requestId', requestId);
    await next();
    c.res.headers.set('x-request-id', requestId);
    logger.info('request', {
      request_id: requestId,
      method: c.req.method,
      path: new URL(c.req.url).pathname,
      status: c.res.status,
      duration_ms: Math.round((performance.now() - started) * 10) / 10,
    });
  };
}
