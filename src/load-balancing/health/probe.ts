import { FailureReason } from './failure-reasons.ts';
import { httpAttempt } from './http-probe.ts';
import type { ProbeResult, ProbeTarget } from './probe-types.ts';
import { tcpAttempt } from './tcp-probe.ts';

/**
 * One health check of one origin: an attempt, retried immediately up to `retries` times while it
 * fails. The result is the first success, or the last failure.
 */
export async function probe(target: ProbeTarget): Promise<ProbeResult> {
  let result = await attempt(target);
  for (let retry = 0; retry < target.retries && !result.healthy; retry++) result = await attempt(target);
  return result;
}

function attempt(target: ProbeTarget): Promise<ProbeResult> {
  switch (target.type) {
    case 'http':
    case 'https':
      return httpAttempt(target);
    case 'tcp':
    case 'smtp':
      return tcpAttempt(target);
    default:
      // ICMP and UDP-ICMP need raw sockets (root); Ledge accepts such monitors but does not run them.
      return Promise.resolve({ healthy: true, failureReason: FailureReason.none, responseCode: null, rttMs: null });
  }
}

/** ICMP-based monitors are stored and returned but not probed (see docs/architecture.md). */
export function isProbed(type: ProbeTarget['type']): boolean {
  return type === 'http' || type === 'https' || type === 'tcp' || type === 'smtp';
}
