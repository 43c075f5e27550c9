import { MetricsRegistry } from './metrics.ts';
import type { Clock } from './clock.ts';

/** `2xx`..`5xx`: a bounded label for an HTTP status. */
export function statusClass(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other';
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Known HTTP methods as they are; anything else (a client may send any token) is `OTHER`. */
export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : 'OTHER';
}

/**
 * Every metric family Ledge exposes at /metrics, in one place. Subsystems receive this object and count
 * into it; figures that live elsewhere (process, outbox depth, workerd isolates) are read on scrape by
 * collectors registered with `onCollect`.
 */
export class LedgeMetrics {
  readonly registry = new MetricsRegistry();

  readonly apiRequests = this.registry.counter(
    'ledge_api_requests_total',
    'API requests by route group (subsystem), method and status class.',
    ['group', 'method', 'status_class'],
  );
  readonly apiLatency = this.registry.histogram(
    'ledge_api_request_duration_seconds',
    'API request latency until the response headers, by route group and method.',
    ['group', 'method'],
  );

  readonly functionRequests = this.registry.counter(
    'ledge_function_requests_total',
    'Function requests per script by outcome (ok: a response; exception: the handler threw).',
    ['account', 'script', 'outcome'],
  );
  readonly functionResponses = this.registry.counter(
    'ledge_function_responses_total',
    'Function responses per script by status class.',
    ['account', 'script', 'status_class'],
  );
  readonly functionLatency = this.registry.histogram(
    'ledge_function_request_duration_seconds',
    "Function latency until the response, per script, on the isolate's clock (it advances on I/O only).",
    ['account', 'script'],
  );
  readonly scheduledRuns = this.registry.counter(
    'ledge_function_scheduled_runs_total',
    'Cron trigger runs per script by outcome.',
    ['account', 'script', 'outcome'],
  );
  readonly workerdRestarts = this.registry.counter(
    'ledge_workerd_restarts_total',
    'workerd processes restarted after an unexpected exit (crash) or a CPU/memory limit kill (limit).',
    ['reason'],
  );

  readonly r2Operations = this.registry.counter(
    'ledge_r2_operations_total',
    'R2 operations by operation and source (api: /client/v4; binding: functions).',
    ['op', 'source'],
  );
  readonly r2BytesIn = this.registry.counter(
    'ledge_r2_received_bytes_total',
    'Object bytes written to R2 (uploads, parts).',
    ['source'],
  );
  readonly r2BytesOut = this.registry.counter('ledge_r2_sent_bytes_total', 'Object bytes read from R2 (downloads).', [
    'source',
  ]);

  readonly probes = this.registry.counter(
    'ledge_health_probes_total',
    'Health probes per pool and origin by result (healthy, unhealthy).',
    ['pool', 'origin', 'result'],
  );
  readonly probeLatency = this.registry.histogram(
    'ledge_health_probe_duration_seconds',
    'Round-trip time of health probes per pool and origin.',
    ['pool', 'origin'],
  );

  readonly deliveries = this.registry.counter(
    'ledge_notification_deliveries_total',
    'Notification delivery attempts by result (sent, failed: given up, retried: failed and rescheduled).',
    ['result'],
  );
  readonly outboxDepth = this.registry.gauge(
    'ledge_notification_outbox_depth',
    'Deliveries waiting in the outbox (pending or due for a retry).',
  );

  readonly processCpu = this.registry.counter(
    'process_cpu_seconds_total',
    'Total user and system CPU time spent in seconds.',
  );
  readonly processCpuUser = this.registry.counter(
    'process_cpu_user_seconds_total',
    'Total user CPU time spent in seconds.',
  );
  readonly processCpuSystem = this.registry.counter(
    'process_cpu_system_seconds_total',
    'Total system CPU time spent in seconds.',
  );
  readonly processRss = this.registry.gauge('process_resident_memory_bytes', 'Resident memory size in bytes.');
  readonly processStart = this.registry.gauge(
    'process_start_time_seconds',
    'Start time of the process since unix epoch in seconds.',
  );

  /** `clock`: the platform's; the process's start is its time less the process's uptime. */
  constructor(clock: Clock) {
    const startSeconds = Math.round(clock.now() / 1000 - process.uptime());
    this.registry.onCollect(() => {
      const cpu = process.cpuUsage();
      setTotal(this.processCpuUser, cpu.user / 1e6);
      setTotal(this.processCpuSystem, cpu.system / 1e6);
      setTotal(this.processCpu, (cpu.user + cpu.system) / 1e6);
      this.processRss.set({}, process.memoryUsage.rss());
      this.processStart.set({}, startSeconds);
    });
  }

  /** One R2 operation with the object bytes it moved. */
  r2(op: string, source: 'api' | 'binding', bytesIn = 0, bytesOut = 0): void {
    this.r2Operations.inc({ op, source });
    if (bytesIn > 0) this.r2BytesIn.inc({ source }, bytesIn);
    if (bytesOut > 0) this.r2BytesOut.inc({ source }, bytesOut);
  }

  /** One health probe's result. */
  probe(pool: string, origin: string, healthy: boolean, rttMs: number | null): void {
    this.probes.inc({ pool, origin, result: healthy ? 'healthy' : 'unhealthy' });
    if (rttMs !== null) this.probeLatency.observe({ pool, origin }, rttMs / 1000);
  }
}

/** A counter whose total is read from elsewhere (the process's CPU time): moves it to that total. */
function setTotal(counter: ReturnType<MetricsRegistry['counter']>, total: number): void {
  const delta = total - counter.get();
  if (delta > 0) counter.inc({}, delta);
}
