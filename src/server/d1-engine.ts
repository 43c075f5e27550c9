import { join } from 'node:path';
import type { SqlDatabase } from '../db/index.ts';
import { createD1Subsystem, SqlD1Store, type D1Subsystem } from '../d1/index.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { d1Engine, d1SocketPath, EngineHost, type EngineKind } from '../workerd/engines/index.ts';
import type { D1ServiceResolver } from '../workerd/index.ts';
import type { DatabaseLookup } from '../workers/index.ts';
import type { ServerConfig } from './config.ts';

/**
 * D1 composed: its records and API (src/d1), its engine kind in each account's engine process (workerd's
 * d1.js, src/workerd/engines), and what functions' bindings need (which databases an account has, where each
 * answers). The engine host is the D1 subsystem's background service: it starts before the functions runtime
 * whose bindings reach it, and stops after it.
 */
export function composeD1(deps: {
  db: SqlDatabase;
  config: ServerConfig;
  paths: { runtime: string; root: string };
  logger: Logger;
  clock: Clock;
}): {
  subsystem: D1Subsystem;
  host: EngineHost;
  forWorkers: { databases: DatabaseLookup; resolver: D1ServiceResolver };
} {
  const store = new SqlD1Store(deps.db);
  const kind: EngineKind = {
    name: 'd1',
    accounts: async () => [...new Set((await store.all()).map((d) => d.account_id))],
    build: async (accountId, paths) => {
      const databases = await store.all(accountId);
      if (databases.length === 0) return { services: [], sockets: [], directories: [] };
      return d1Engine(
        accountId,
        databases.map((d) => d.uuid),
        { dataDir: join(paths.dataDir, 'd1'), socketDir: paths.socketDir },
        { maxDatabaseBytes: deps.config.d1.maxDatabaseBytes },
      );
    },
  };
  const host = new EngineHost({
    runtimeDir: deps.paths.runtime,
    dataDir: join(deps.paths.root, 'engines'),
    kinds: [kind],
    logger: deps.logger.child({ component: 'engines' }),
    clock: deps.clock,
  });
  const address = (accountId: string, databaseId: string) =>
    `unix:${d1SocketPath(host.paths(accountId).socketDir, databaseId)}`;
  const subsystem = createD1Subsystem({
    db: deps.db,
    endpoints: {
      address: async (accountId, databaseId) => {
        await host.ensure(accountId);
        return address(accountId, databaseId);
      },
    },
    changes: {
      created: (database) => host.reload(database.account_id),
      deleted: (database) => host.reload(database.account_id),
    },
    limits: deps.config.d1,
    transfersDir: join(deps.paths.root, 'd1', 'transfers'),
    clock: deps.clock,
    background: [host],
  });
  return {
    subsystem,
    host,
    forWorkers: {
      databases: { databaseExists: async (accountId, id) => (await store.find(accountId, id)) !== undefined },
      resolver: { address },
    },
  };
}
