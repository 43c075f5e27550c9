import type { Subsystem } from '../api-kit/subsystem.ts';
import type { SqlDatabase } from '../db/index.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { KvEngineClient, type KvEngineSockets } from './engine-client.ts';
import { namespaceRoutes } from './namespace-routes.ts';
import { KvService } from './service.ts';
import { SqlKvNamespaceStore } from './store.ts';
import { valueRoutes } from './value-routes.ts';

/** KV's tunables, as the server's settings give them. */
export interface KvSettings {
  /** Namespaces one account may have (LEDGE_MAX_KV_NAMESPACES_PER_ACCOUNT). */
  maxNamespacesPerAccount: number;
}

export interface KvSubsystem extends Subsystem {
  service: KvService;
  /** The accounts that have namespaces (their engines start with the server). */
  accounts(): Promise<string[]>;
}

/** Workers KV: namespaces in the database, keys in each account's engine. /accounts/{a}/storage/kv. */
export function createKvSubsystem(deps: {
  db: SqlDatabase;
  engines: KvEngineSockets;
  settings: KvSettings;
  logger: Logger;
  clock: Clock;
}): KvSubsystem {
  const store = new SqlKvNamespaceStore(deps.db);
  const engine = new KvEngineClient(deps.engines);
  const service = new KvService({
    store,
    engine,
    clock: deps.clock,
    logger: deps.logger,
    maxNamespacesPerAccount: deps.settings.maxNamespacesPerAccount,
  });
  return {
    name: 'kv',
    service,
    accounts: () => store.accounts(),
    background: [{ name: 'kv-engine-client', start: () => undefined, stop: () => engine.close() }],
    mountRoutes: (api) => {
      api.route('/', namespaceRoutes(service));
      api.route('/', valueRoutes(service));
    },
  };
}
