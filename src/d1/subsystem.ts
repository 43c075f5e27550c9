import type { Subsystem } from '../api-kit/subsystem.ts';
import type { SqlDatabase } from '../db/index.ts';
import type { BackgroundService } from '../shared/background-service.ts';
import type { Clock } from '../shared/clock.ts';
import { D1EngineClient, type D1EngineSockets } from './engine-client.ts';
import { D1Errors } from './errors.ts';
import { d1Routes } from './routes.ts';
import { D1Service, type D1Limits } from './service.ts';
import { SqlD1Store } from './store.ts';
import { d1TransferRoutes, mountD1TokenRoutes } from './transfer-routes.ts';
import { D1Transfers } from './transfers.ts';

export interface D1Subsystem extends Subsystem {
  service: D1Service;
  store: SqlD1Store;
  /** The accounts that have databases (their engines start with the server). */
  accounts(): Promise<string[]>;
}

/** D1: databases' records and API here, their data in each account's engines process (workerd's d1.js). */
export function createD1Subsystem(deps: {
  db: SqlDatabase;
  /** The accounts' engines (engine-host.ts): a database is reached on its account's D1 socket. */
  engines: D1EngineSockets;
  limits?: Partial<D1Limits> | undefined;
  /** Where import uploads and export downloads wait (the data directory's `d1/transfers`). */
  transfersDir: string;
  importMaxBytes?: number | undefined;
  clock: Clock;
}): D1Subsystem {
  const clock = deps.clock;
  const store = new SqlD1Store(deps.db);
  const engine = new D1EngineClient(deps.engines);
  // The account's first database starts its engines: a binding to it reaches them at once. An engine that cannot
  // start now is the server's trouble (503), not the client's.
  const changes = {
    created: (database: { account_id: string }) =>
      deps.engines.ensure(database.account_id).catch(() => {
        throw D1Errors.unavailable('the engine did not start; try again shortly');
      }),
  };
  const service = new D1Service({ store, engine, limits: deps.limits, changes, clock });
  const transfers = new D1Transfers({
    d1: service,
    dir: deps.transfersDir,
    clock,
    importMaxBytes: deps.importMaxBytes,
  });
  const closer: BackgroundService = { name: 'd1-engine-client', start: () => undefined, stop: () => engine.close() };
  return {
    name: 'd1',
    service,
    store,
    accounts: () => store.accounts(),
    background: [closer],
    mountRoutes: (api) => {
      api.route('/', d1Routes(service));
      api.route('/', d1TransferRoutes(service, transfers));
    },
    mountTokenRoutes: (api) => mountD1TokenRoutes(api, transfers),
  };
}
