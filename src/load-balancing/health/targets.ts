import type { Monitor } from '../monitor-schemas.ts';
import type { Origin } from '../pool-schemas.ts';
import type { ProbeTarget } from './probe-types.ts';

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443, smtp: 25 };

/**
 * Resolves what to probe for one origin. Port: the monitor's when set (it describes the health
 * endpoint), else the origin's, else the protocol default. Host: the monitor's Host header wins over
 * the origin's, as on Cloudflare.
 */
export function probeTarget(monitor: Monitor, origin: Origin, poolId: string): ProbeTarget {
  const headers: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(monitor.header)) headers[name] = values;
  const monitorHost = Object.keys(headers).some((name) => name.toLowerCase() === 'host');
  if (!monitorHost && origin.header?.Host[0]) headers['Host'] = [origin.header.Host[0]];
  return {
    type: monitor.type,
    address: origin.address,
    port: monitor.port || origin.port || DEFAULT_PORTS[monitor.type] || 0,
    method: monitor.method,
    path: monitor.path || '/',
    headers,
    timeoutMs: monitor.timeout * 1000,
    retries: monitor.retries,
    expectedCodes: monitor.expected_codes || '2xx',
    expectedBody: monitor.expected_body,
    followRedirects: monitor.follow_redirects,
    allowInsecure: monitor.allow_insecure,
    poolId,
  };
}

/** Two origins with the same key are probed the same way (used to keep schedules across edits). */
export function targetKey(target: ProbeTarget, intervalSeconds: number): string {
  return JSON.stringify([target, intervalSeconds]);
}
