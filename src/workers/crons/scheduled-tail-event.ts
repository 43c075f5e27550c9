import type { ScheduledOutcome, TailEvent } from '../../workerd/index.ts';
import type { CronRunRecord } from './cron-store.ts';

/**
 * A Cron Trigger run as Cloudflare's tail shows it to `wrangler tail` and `ledge tail`: a scheduled event
 * (`event: { cron, scheduledTime }`) with the run's console calls and its uncaught exception. A run the
 * runtime could not make (no deployment, the process died) is an exception event naming why.
 */
export function scheduledTailEvent(run: CronRunRecord, result: ScheduledOutcome): TailEvent {
  const started = Date.parse(run.started_on);
  const exceptions =
    run.status === 'ok'
      ? []
      : result.exception
        ? [result.exception]
        : [
            {
              name: 'Error',
              message: run.error ?? 'the scheduled() run failed',
              timestamp: started + (run.duration_ms ?? 0),
            },
          ];
  return {
    outcome: run.status === 'ok' ? 'ok' : 'exception',
    scriptName: run.script_name,
    exceptions,
    logs: result.logs ?? [],
    eventTimestamp: started,
    event: { cron: run.cron, scheduledTime: Date.parse(run.scheduled_time) },
    wallTime: run.duration_ms ?? 0,
    diagnosticsChannelEvents: [],
    truncated: false,
    executionModel: 'stateless',
  };
}
