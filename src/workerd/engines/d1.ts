import { join } from 'node:path';
import type { Service, Socket } from '../config/types.ts';

/** The engine's Worker answers every database of the account, one Durable Object each (by its id). */
export const D1_ENGINE_SERVICE = 'd1';
const D1_STORAGE_SERVICE = 'd1-storage';

/**
 * The engine's Worker: workerd's d1.js as it is, but for its database class, which caps each database's
 * file at the account's limit (SQLite's max_page_count, set through the SQL API's setMaxPageCountForTest,
 * which the `experimental` compatibility flag exposes). A write past it fails with SQLite's own
 * `database or disk is full: SQLITE_FULL` and rolls back; reads and deletes go on.
 */
const LIMITED_ENGINE = `import Engine, { D1Database as EngineDatabase } from './d1.js';
export class D1Database extends EngineDatabase {
  constructor(ctx, env) {
    super(ctx, env);
    const pageSize = ctx.storage.sql.exec('PRAGMA page_size').one().page_size;
    ctx.storage.sql.setMaxPageCountForTest(Math.max(1, Math.floor(env.MAX_DATABASE_BYTES / pageSize)));
  }
}
export default Engine;
`;

/** Where one account's D1 engine keeps its data and listens. */
export interface D1EnginePaths {
  /** The account's D1 directory: one SQLite file per database, written by workerd (never by Ledge). */
  dataDir: string;
  /** The directory of the databases' sockets. */
  socketDir: string;
}

/** The socket a database answers on (what a script's d1 binding and the API's client reach); kept short. */
export function d1SocketPath(socketDir: string, databaseId: string): string {
  return join(socketDir, `d1-${databaseId.replace(/-/g, '')}.sock`);
}

/**
 * One account's D1 engine, as workerd's bundled d1.js states its config: a Worker with RPC, the
 * SQLite-backed `D1Database` class (here with the size cap above) on a local disk, bound as DATABASE. Each database is a socket whose
 * service carries `{"database": "<id>"}` as props: whoever reaches that socket reaches that database alone.
 * The Durable Objects' unique key is the account's id, so two accounts' objects could never share files
 * even on one disk. Pure: builds records, touches nothing.
 */
export function d1Engine(
  accountId: string,
  databaseIds: readonly string[],
  paths: D1EnginePaths,
  limits: { maxDatabaseBytes: number },
): { services: Service[]; sockets: Socket[]; directories: string[] } {
  const services: Service[] = [
    { name: D1_STORAGE_SERVICE, disk: { path: paths.dataDir, writable: true } },
    {
      name: D1_ENGINE_SERVICE,
      worker: {
        modules: [
          { name: 'main.js', esModule: LIMITED_ENGINE },
          { name: 'd1.js', bundled: '/workerd/d1.js' },
        ],
        compatibilityDate: '2025-01-01',
        compatibilityFlags: ['experimental'],
        durableObjectNamespaces: [{ className: 'D1Database', uniqueKey: `ledge-d1-${accountId}`, enableSql: true }],
        durableObjectStorage: { localDisk: D1_STORAGE_SERVICE },
        bindings: [
          { name: 'DATABASE', durableObjectNamespace: { className: 'D1Database' } },
          { name: 'MAX_DATABASE_BYTES', json: JSON.stringify(limits.maxDatabaseBytes) },
        ],
      },
    },
  ];
  const sockets: Socket[] = databaseIds.map((id) => ({
    name: `d1-${id}`,
    address: `unix:${d1SocketPath(paths.socketDir, id)}`,
    http: {},
    service: { name: D1_ENGINE_SERVICE, props: { json: JSON.stringify({ database: id }) } },
  }));
  return { services, sockets, directories: [paths.dataDir, paths.socketDir] };
}
