import type { Subsystem } from '../api-kit/subsystem.ts';
import type { SqlDatabase } from '../db/index.ts';
import type { Clock } from '../shared/clock.ts';
import { zoneRoutes } from './routes.ts';
import { ZoneService } from './service.ts';
import { SqlZoneStore } from './store.ts';

export interface ZonesSubsystem extends Subsystem {
  service: ZoneService;
}

/** Zones: hostnames owned by accounts, which load balancers live in. /zones. */
export function createZonesSubsystem(deps: {
  db: SqlDatabase;
  accounts: ConstructorParameters<typeof ZoneService>[1];
  /** Stamps zones' created_on and modified_on (tests pass a clock they advance). */
  clock: Clock;
}): ZonesSubsystem {
  const service = new ZoneService(new SqlZoneStore(deps.db), deps.accounts, deps.clock);
  return { name: 'zones', service, background: [], mountRoutes: (api) => api.route('/', zoneRoutes(service)) };
}
