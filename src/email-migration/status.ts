import type { MigrationApi } from './api.ts';
import { policiesForPool } from './coverage.ts';
import { poolPages } from './scan.ts';

export type PoolMigrationState = 'migrated' | 'legacy' | 'no_alerts';

export interface PoolStatus {
  id: string;
  name: string;
  notification_email: string;
  policies: string[];
  state: PoolMigrationState;
}

export interface MigrationStatus {
  complete: boolean;
  pools: PoolStatus[];
  counts: Record<PoolMigrationState, number>;
}

/**
 * Per the spec: a pool is migrated when a notification policy covers it and its notification_email is
 * empty; the account's migration is incomplete while any pool keeps a legacy email.
 */
export async function migrationStatus(api: MigrationApi, perPage: number): Promise<MigrationStatus> {
  const policies = await api.listPolicies();
  const status: MigrationStatus = { complete: true, pools: [], counts: { migrated: 0, legacy: 0, no_alerts: 0 } };
  for await (const { pools } of poolPages(api, perPage)) {
    for (const pool of pools) {
      const covering = policiesForPool(policies, pool.id).map((p) => p.id);
      const state: PoolMigrationState =
        pool.notification_email !== '' ? 'legacy' : covering.length > 0 ? 'migrated' : 'no_alerts';
      if (state === 'legacy') status.complete = false;
      status.counts[state]++;
      status.pools.push({
        id: pool.id,
        name: pool.name,
        notification_email: pool.notification_email,
        policies: covering,
        state,
      });
    }
  }
  return status;
}
