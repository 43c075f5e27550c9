import { FailureReason } from './failure-reasons.ts';
import type { ProbeResult } from './probe-types.ts';

/** The stored health of one origin of one pool. */
export interface OriginState {
  originName: string;
  address: string;
  healthy: boolean;
  /** Consecutive successful / failed checks, for consecutive_up / consecutive_down. */
  successes: number;
  failures: number;
  failureReason: string;
  responseCode: number | null;
  rttMs: number | null;
  checkedAt: string;
}

/** What the checker knows about a pool when it evaluates it. */
export interface PoolPlan {
  accountId: string;
  poolId: string;
  poolName: string;
  legacyEmail: string;
  minimumOrigins: number;
  consecutiveUp: number;
  consecutiveDown: number;
  /** Enabled origins only: disabled ones are not probed and count as not healthy. */
  origins: { name: string; address: string }[];
}

/**
 * Applies one check result. An origin without a stored state is assumed healthy (as a pool without
 * a monitor is), so an origin that is down from the start still produces an Unhealthy event.
 * consecutive_up/down of 0 mean "one result is enough".
 */
export function nextOriginState(
  previous: OriginState | undefined,
  result: ProbeResult,
  plan: PoolPlan,
  origin: { name: string; address: string },
  now: string,
): OriginState {
  const wasHealthy = previous?.healthy ?? true;
  const successes = result.healthy ? (previous?.successes ?? 0) + 1 : 0;
  const failures = result.healthy ? 0 : (previous?.failures ?? 0) + 1;
  let healthy = wasHealthy;
  if (!wasHealthy && successes >= Math.max(1, plan.consecutiveUp)) healthy = true;
  if (wasHealthy && failures >= Math.max(1, plan.consecutiveDown)) healthy = false;
  return {
    originName: origin.name,
    address: origin.address,
    healthy,
    successes,
    failures,
    failureReason: result.failureReason,
    responseCode: result.responseCode,
    rttMs: result.rttMs,
    checkedAt: now,
  };
}

/** A pool is healthy while at least `minimum_origins` of its enabled origins are healthy. */
export function evaluatePool(
  plan: PoolPlan,
  states: ReadonlyMap<string, OriginState>,
): { healthy: boolean; reason: string } {
  let healthyCount = 0;
  const reasons = new Map<string, number>();
  for (const origin of plan.origins) {
    const state = states.get(origin.name);
    if (!state || state.healthy) {
      healthyCount++;
    } else {
      reasons.set(state.failureReason, (reasons.get(state.failureReason) ?? 0) + 1);
    }
  }
  if (healthyCount >= plan.minimumOrigins) return { healthy: true, reason: FailureReason.none };
  // The most frequent failure among unhealthy origins explains the pool; disabled origins have none.
  const [reason] = [...reasons.entries()].sort((a, b) => b[1] - a[1])[0] ?? [FailureReason.other];
  return { healthy: false, reason: reason === FailureReason.none ? FailureReason.other : reason };
}
