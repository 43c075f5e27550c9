import type { MiddlewareHandler } from 'hono';
import { methodLabel, statusClass, type LedgeMetrics } from '../shared/ledge-metrics.ts';
import { newRequestId } from '../shared/ids.ts';
import type { Logger } from '../shared/logger.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { routeGroup } from './route-group.ts';
import { runWithRequestId } from '../shared/request-context.ts';

/**
 * Gives every request an id (echoed as `x-request-id`), writes one structured log line per request and
 * counts it by route group, method and status class.
 */
export function requestLog(logger: Logger, metrics?: LedgeMetrics, prefix = ''): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const requestId = newRequestId();
    c.set('requestId', requestId);
    // Work this request sets off (outbox rows, test deliveries, cron runs) carries its id.
    await runWithRequestId(requestId, next);
    c.res.headers.set('x-request-id', requestId);
    const path = new URL(c.req.url).pathname;
    const seconds = (performance.now() - started) / 1000;
    if (metrics) {
      const group = routeGroup(path.slice(prefix.length));
      const method = methodLabel(c.req.method);
      metrics.apiRequests.inc({ group, method, status_class: statusClass(c.res.status) });
      metrics.apiLatency.observe({ group, method }, seconds);
    }
    logger.info('request', {
      request_id: requestId,
      method: c.req.method,
      path,
      status: c.res.status,
      duration_ms: Math.round(seconds * 10_000) / 10,
    });
  };
}
