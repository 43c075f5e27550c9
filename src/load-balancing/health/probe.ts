import type { EgressPolicy } from '../../egress/index.ts';
import { FailureReason } from './failure-reasons.ts';
import { httpAttempt } from './http-probe.ts';
import type { ProbeResult, ProbeTarget } from './probe-types.ts';
import { tcpAttempt } from './tcp-probe.ts';

/**
 * One health check of one origin: an attempt, retried immediately up to `retries` times while it
 * fails. The result is the first success, or the last failure. A target the egress policy refuses is
 * not retried: the answer would not change.
 */
export async function probe(target: ProbeTarget, egress: EgressPolicy): Promise<ProbeResult> {
  let result = await attempt(target, egress);
  for (let retry = 0; retry < target.retries && !result.healthy; retry++) {
    if (result.failureReason === FailureReason.egressRefused) break;
    result = await attempt(target, egress);
  }
  return result;
}

function attempt(target: ProbeTarget, egress: EgressPolicy): Promise<ProbeResult> {
  switch (target.type) {
    case 'http':
    case 'https':
      return httpAttempt(target, egress);
    case 'tcp':
    case 'smtp':
      return tcpAttempt(target, egress);
    default:
      // ICMP and UDP-ICMP need raw sockets (root); Ledge accepts such monitors but does not run them.
      return Promise.resolve({ healthy: true, failureReason: FailureReason.none, responseCode: null, rttMs: null });
  }
}

/** ICMP-based monitors are stored and returned but not probed (see docs/architecture.md). */
export function isProbed(type: ProbeTarget['type']): boolean {
  return type === 'http' || type === 'https' || type === 'tcp' || type === 'smtp';
}
