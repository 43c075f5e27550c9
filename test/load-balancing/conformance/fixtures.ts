import type { SqlDatabase } from '../../../src/db/index.ts';
import { monitorInputSchema, toMonitor, type Monitor } from '../../../src/load-balancing/monitor-schemas.ts';
import { PoolInputSchema, type Pool } from '../../../src/load-balancing/pool-schemas.ts';
import { newId } from '../../../src/shared/ids.ts';

/** What a conformance case gets: the database of the current test, and a second handle on it. */
export interface StoreContext {
  db(): SqlDatabase;
  reopen(): SqlDatabase;
}

const NOW = '2026-01-01T00:00:00.000Z';

/** A pool as the service would store it (schema defaults filled in). */
export function pool(name: string, fields: Partial<Pool> = {}): Pool {
  const input = PoolInputSchema.parse({
    name,
    origins: [{ name: 'o1', address: '192.0.2.1' }],
  });
  const { monitor: _m, ...rest } = input;
  return { ...rest, id: newId(), created_on: NOW, modified_on: NOW, ...fields } as Pool;
}

export function monitor(fields: Partial<Monitor> = {}): Monitor {
  const input = monitorInputSchema(1).parse({});
  return { ...toMonitor(input, { id: newId(), created_on: NOW, modified_on: NOW }), ...fields };
}
