import type { EgressPolicy } from '../../egress/index.ts';
import { newId } from '../../shared/ids.ts';
import { assertOriginsReachable } from '../egress-check.ts';
import { LbErrors } from '../errors.ts';
import type { Monitor } from '../monitor-schemas.ts';
import type { Pool } from '../pool-schemas.ts';
import { formatRtt, type OriginHealth } from './health-view.ts';
import type { PreviewStore } from './preview-store.ts';
import { probe } from './probe.ts';
import { probeTarget } from './targets.ts';
import { isoNow } from '../../shared/time.ts';
import type { Clock } from '../../shared/clock.ts';

export type PreviewResult = Record<string, { healthy: boolean; origins: Record<string, OriginHealth>[] }>;

/**
 * Previews run a monitor configuration once against pools' enabled origins (retries included) and
 * keep the result under a preview id. The POST waits for the probes (bounded by timeout x tries),
 * so `GET /preview/{id}` always answers with finished results.
 */
export class PreviewService {
  readonly #store: PreviewStore;
  readonly #egress: EgressPolicy;

  readonly #clock: Clock;

  constructor(store: PreviewStore, egress: EgressPolicy, clock: Clock) {
    this.#clock = clock;
    this.#store = store;
    this.#egress = egress;
  }

  async run(
    accountId: string,
    pools: readonly Pool[],
    monitor: Monitor,
  ): Promise<{ preview_id: string; pools: Record<string, string> }> {
    // A refused origin is a 400 before anything is sent (the probes would refuse it too).
    for (const pool of pools) {
      const origins = pool.origins.filter((o) => o.enabled);
      await assertOriginsReachable(this.#egress, origins, monitor, `pool "${pool.name}": `);
    }
    const result: PreviewResult = {};
    await Promise.all(
      pools.map(async (pool) => {
        const origins = pool.origins.filter((o) => o.enabled);
        const checks = await Promise.all(
          origins.map((origin) => probe(probeTarget(monitor, origin, pool.id), this.#egress)),
        );
        const healthyCount = checks.filter((c) => c.healthy).length;
        result[pool.id] = {
          healthy: healthyCount >= pool.minimum_origins,
          origins: checks.map((check, i) => {
            const health: OriginHealth = { healthy: check.healthy, failure_reason: check.failureReason };
            if (check.rttMs !== null) health.rtt = formatRtt(check.rttMs);
            if (check.responseCode !== null) health.response_code = check.responseCode;
            return { [origins[i]?.address ?? '']: health };
          }),
        };
      }),
    );
    const id = newId();
    await this.#store.save(accountId, id, JSON.stringify(result), isoNow(this.#clock));
    return { preview_id: id, pools: Object.fromEntries(pools.map((p) => [p.id, p.name])) };
  }

  async get(accountId: string, id: string): Promise<PreviewResult> {
    const result = await this.#store.get(accountId, id);
    if (result === undefined) throw LbErrors.previewNotFound(id);
    return JSON.parse(result) as PreviewResult;
  }
}
