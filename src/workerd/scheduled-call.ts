import { request } from 'node:http';
import type { TailException, TailLog } from './tail-traces.ts';

/** What a scheduled() run answered: workerd's outcome (`ok`, `exception`, ...), or why it did not run. */
export interface ScheduledOutcome {
  outcome: string;
  error?: string | undefined;
  /** The run's console calls and its uncaught exception, as a tail event carries them. */
  logs?: TailLog[] | undefined;
  exception?: TailException | undefined;
}

/** A Cron Trigger run may take this long (Cloudflare allows up to 15 minutes of wall time). */
const SCHEDULED_TIMEOUT_MS = 15 * 60_000;

/** Asks a process's ping service (isolate/metrics.ts) to run a script's scheduled() handler. */
export function callScheduled(
  pingSocket: string,
  target: { accountId: string; script: string; cron: string; scheduledTime: number },
): Promise<ScheduledOutcome> {
  const query = new URLSearchParams({
    a: target.accountId,
    s: target.script,
    cron: target.cron,
    time: String(target.scheduledTime),
  });
  return new Promise((resolve) => {
    const req = request(
      { socketPath: pingSocket, path: `/scheduled?${query}`, method: 'POST', timeout: SCHEDULED_TIMEOUT_MS },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ScheduledOutcome;
            resolve({ outcome: String(body.outcome), error: body.error, logs: body.logs, exception: body.exception });
          } catch {
            resolve({ outcome: 'error', error: `the runtime answered ${response.statusCode}` });
          }
        });
        response.on('error', (error) => resolve({ outcome: 'error', error: error.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('the scheduled() handler ran past 15 minutes')));
    // The process died under the run (a limit kill, a crash) or was replaced by a redeploy.
    req.on('error', (error) => resolve({ outcome: 'error', error: error.message }));
    req.end();
  });
}
