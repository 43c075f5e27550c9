import type { Subsystem } from '../api-kit/subsystem.ts';
import type { SqlDatabase } from '../db/index.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { workerRouteApi } from './api.ts';
import { WorkerRouteDirectory } from './directory.ts';
import { WorkerDomainService, type DomainDeps } from './domains.ts';
import { WorkerRouteService } from './service.ts';
import { SqlWorkerRouteStore } from './store.ts';

export interface WorkerRoutesSubsystem extends Subsystem {
  routes: WorkerRouteService;
  /** Before a zone is deleted: its routes and Custom Domains go, and stop being served. */
  forgetZone(zoneId: string): Promise<void>;
  domains: WorkerDomainService;
  /** The table the traffic port's listeners consult (`directory.table.match(host, target, https)`). */
  directory: WorkerRouteDirectory;
  store: SqlWorkerRouteStore;
}

/**
 * Workers routes and Custom Domains: which of an account's scripts serves a URL of one of its zones on the
 * traffic port. `changed` runs after every committed change, once this node's table is rebuilt.
 */
export function createWorkerRoutesSubsystem(deps: {
  db: SqlDatabase;
  zones: DomainDeps['zones'];
  scriptExists: DomainDeps['scriptExists'];
  hostnameUse: DomainDeps['hostnameUse'];
  changed: () => Promise<void>;
  logger?: Logger | undefined;
  clock: Clock;
}): WorkerRoutesSubsystem {
  const store = new SqlWorkerRouteStore(deps.db);
  const directory = new WorkerRouteDirectory({ store, logger: deps.logger });
  const changed = async () => {
    await directory.refresh();
    await deps.changed();
  };
  const common = { store, zones: deps.zones, scriptExists: deps.scriptExists, changed, clock: deps.clock };
  const routes = new WorkerRouteService(common);
  const domains = new WorkerDomainService({ ...common, hostnameUse: deps.hostnameUse });
  return {
    name: 'worker-routes',
    routes,
    domains,
    directory,
    store,
    forgetZone: async (zoneId) => {
      await store.forgetZone(zoneId);
      await changed();
    },
    background: [directory],
    mountRoutes: (api) => api.route('/', workerRouteApi(routes, domains)),
  };
}
