import { join } from 'node:path';
import type { EngineKind } from './contract.ts';
import { ENGINE_COMPATIBILITY_DATE, engineSocket } from './common.ts';
import { engineShim } from './shim.ts';

/** The header that names the D1 database a request is for (injected by the binding's external service). */
export const D1_DATABASE_HEADER = 'x-ledge-d1-database';
/** Database ids are UUIDs, lower case (as the API hands them out and the upload stores them). */
const DATABASE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * workerd's d1.js as it is, but for its database class, which caps each database's file at the configured
 * size (SQLite's max_page_count, set through the SQL API's setMaxPageCountForTest, which the `experimental`
 * compatibility flag exposes). A write past it fails with SQLite's own `database or disk is full: SQLITE_FULL`
 * and rolls back; reads and deletes go on.
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

/**
 * D1: workerd's bundled `/workerd/d1.js` (with the size cap above), one SQLite-backed `D1Database` Durable
 * Object per database on the account's disk, bound as DATABASE. The objects' unique key carries the account's
 * id, so two accounts' databases could never share files even on one disk (and databases made before the
 * engines shared a process keep their files: same key, same `<account>/d1` folder). Its HTTP protocol is the
 * one workerd's d1 binding speaks (POST /query...).
 */
export function d1Engine(limits: { maxDatabaseBytes: number }): EngineKind {
  return {
    name: 'd1',
    build({ accountId, dataDir, socketDir }, files) {
      const storage = join(dataDir, 'd1');
      const shim = engineShim({
        engineModule: 'd1-limited.js',
        header: D1_DATABASE_HEADER,
        prop: 'database',
        idPattern: DATABASE_ID,
        namespaceBinding: 'DATABASE',
      });
      return {
        services: [
          {
            name: 'd1',
            worker: {
              modules: [
                { name: 'd1-main.js', esModule: files.embed('d1-main.js', shim) },
                { name: 'd1-limited.js', esModule: files.embed('d1-limited.js', LIMITED_ENGINE) },
                { name: 'd1.js', bundled: '/workerd/d1.js' },
              ],
              compatibilityDate: ENGINE_COMPATIBILITY_DATE,
              compatibilityFlags: ['experimental'],
              bindings: [
                { name: 'DATABASE', durableObjectNamespace: { className: 'D1Database' } },
                { name: 'MAX_DATABASE_BYTES', json: JSON.stringify(limits.maxDatabaseBytes) },
              ],
              // The unique key and the disk are where databases live: changing either starts empty.
              durableObjectNamespaces: [
                { className: 'D1Database', uniqueKey: `ledge-d1-${accountId}`, enableSql: true },
              ],
              durableObjectStorage: { localDisk: 'd1-storage' },
            },
          },
          { name: 'd1-storage', disk: { path: storage, writable: true } },
        ],
        socket: engineSocket('d1', socketDir, 'd1'),
        directories: [storage],
      };
    },
  };
}
