import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import type { Logger } from '../shared/logger.ts';
import { failureBody } from '../api-kit/envelope.ts';

/** Prometheus's text exposition format, version 0.0.4. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * GET /metrics on the API listener. Only with a token configured (--metrics-token or
 * LEDGE_METRICS_TOKEN), presented as `Authorization: Bearer <token>`: the figures name accounts,
 * scripts and pools, so without a token the endpoint refuses (403) rather than publish them.
 */
export function metricsHandler(metrics: LedgeMetrics, token: string | undefined, logger: Logger) {
  const expected = token === undefined ? undefined : Buffer.from(token, 'utf8');
  return async (c: Context): Promise<Response> => {
    if (!expected) {
      return refusal(
        403,
        'Metrics are off: start the server with --metrics-token or LEDGE_METRICS_TOKEN to enable /metrics.\n',
      );
    }
    const presented = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim() ?? '';
    const bytes = Buffer.from(presented, 'utf8');
    if (bytes.length !== expected.length || !timingSafeEqual(bytes, expected)) {
      const response = refusal(401, 'Unauthorized: send Authorization: Bearer <metrics token>.\n');
      response.headers.set('www-authenticate', 'Bearer realm="ledge-metrics"');
      return response;
    }
    const text = await metrics.registry.expose((error) => logger.warn('a metrics collector failed', { err: error }));
    return new Response(text, { headers: { 'content-type': METRICS_CONTENT_TYPE, 'cache-control': 'no-store' } });
  };
}

/** Refusals are v4 envelopes like every other 4xx of the API listener (code 10000: authentication error). */
function refusal(status: number, message: string): Response {
  return new Response(JSON.stringify(failureBody([{ code: 10000, message: message.trim() }])), {
    status,
    headers: { 'content-type': 'application/json', 'x-should-retry': 'false' },
  });
}
