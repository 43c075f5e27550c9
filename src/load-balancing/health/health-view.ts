import type { Monitor } from '../monitor-schemas.ts';
import type { Pool } from '../pool-schemas.ts';
import { FailureReason } from './failure-reasons.ts';
import type { HealthStore } from './health-store.ts';
import { isProbed } from './probe.ts';

/** All checks run from this one server, so pop_health has a single region key. */
export const HEALTH_REGION = 'local';

export interface OriginHealth {
  healthy: boolean;
  rtt?: string;
  failure_reason: string;
  response_code?: number;
}

export interface PoolHealth {
  pool_id: string;
  pop_health: Record<string, { healthy: boolean; origins: Record<string, OriginHealth>[] }>;
}

export function formatRtt(ms: number): string {
  return `${ms.toFixed(1)}ms`;
}

/**
 * `GET /pools/{id}/health` from the stored state. A pool that is not checked (disabled, no monitor,
 * or an ICMP monitor) has an empty `pop_health`; an enabled origin not probed yet is shown as assumed healthy.
 */
export async function poolHealthView(
  pool: Pool,
  monitor: Monitor | undefined,
  store: HealthStore,
): Promise<PoolHealth> {
  if (!pool.enabled || !monitor || !isProbed(monitor.type)) return { pool_id: pool.id, pop_health: {} };
  const states = await store.originStates(pool.id);
  const origins = pool.origins
    .filter((origin) => origin.enabled)
    .map((origin) => {
      const state = states.get(origin.name);
      const health: OriginHealth = {
        healthy: state?.healthy ?? true,
        failure_reason: state?.failureReason ?? FailureReason.none,
      };
      if (state?.rttMs != null) health.rtt = formatRtt(state.rttMs);
      if (state?.responseCode != null) health.response_code = state.responseCode;
      return { [origin.address]: health };
    });
  const healthy = (await store.poolState(pool.id))?.healthy ?? true;
  return { pool_id: pool.id, pop_health: { [HEALTH_REGION]: { healthy, origins } } };
}
