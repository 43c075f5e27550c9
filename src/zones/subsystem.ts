import type { Subsystem } from '../api-kit/subsystem.ts';
import type { SqlDatabase } from '../db/index.ts';
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
}): ZonesSubsystem {
  const service = new ZoneService(new SqlZoneStore(deps.db), deps.accounts);
  return { name: 'zones', service, background: [], mountRoutes: (api) => api.route('/', zoneRoutes(service)) };
}
