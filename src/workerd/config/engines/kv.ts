import { join } from 'node:path';
import type { Service } from '../types.ts';
import type { EngineKind } from './contract.ts';
import { ENGINE_COMPATIBILITY_DATE, engineSocket } from './common.ts';
import { engineShim } from './shim.ts';

/** The header that names the KV namespace a request is for (injected by the binding's external service). */
export const KV_NAMESPACE_HEADER = 'x-ledge-kv-namespace';
/** Namespace ids are Ledge's own: 32 hex digits. */
const NAMESPACE_ID = /^[0-9a-f]{32}$/;

/**
 * Workers KV: workerd's bundled `/workerd/kv.js` (its header states this config): one SQLite-backed
 * `KVNamespace` Durable Object per namespace on the account's disk, values over 64 KiB as blobs in a
 * writable directory beside it. Its HTTP protocol is the one workerd's kvNamespace binding speaks.
 * In a cluster the objects are the cluster's (one owner each, their data in its bucket), the blobs go to a
 * `bucket` service (the cluster bucket's `services/kv-blobs/`, seen by every node), each node keeps a cache of
 * the blobs it read on its own disk, and `CLUSTERED` tells the module so (it then caches rows per `cacheTtl`).
 */
export const kvEngine: EngineKind = {
  name: 'kv',
  build({ dataDir, socketDir, clustered }, files) {
    const objects = join(dataDir, 'kv', 'objects');
    const blobs = join(dataDir, 'kv', clustered ? 'blob-cache' : 'blobs');
    const shim = engineShim({
      engineModule: 'kv.js',
      header: KV_NAMESPACE_HEADER,
      prop: 'namespace',
      idPattern: NAMESPACE_ID,
      namespaceBinding: 'SHARD',
    });
    const blobServices: Service[] = clustered
      ? [
          { name: 'kv-blobs', bucket: { path: 'kv-blobs' } },
          { name: 'kv-blob-cache', disk: { path: blobs, writable: true } },
        ]
      : [{ name: 'kv-blobs', disk: { path: blobs, writable: true } }];
    return {
      services: [
        {
          name: 'kv',
          worker: {
            modules: [
              { name: 'kv-main.js', esModule: files.embed('kv-main.js', shim) },
              { name: 'kv.js', bundled: '/workerd/kv.js' },
            ],
            compatibilityDate: ENGINE_COMPATIBILITY_DATE,
            bindings: [
              { name: 'SHARD', durableObjectNamespace: { className: 'KVNamespace' } },
              { name: 'BLOBS', service: 'kv-blobs' },
              ...(clustered
                ? [
                    { name: 'BLOB_CACHE', service: 'kv-blob-cache' },
                    { name: 'CLUSTERED', json: 'true' },
                  ]
                : []),
            ],
            // The unique key and the disk are where namespaces live: changing either starts empty.
            durableObjectNamespaces: [{ className: 'KVNamespace', uniqueKey: 'ledge-kv', enableSql: true }],
            durableObjectStorage: { localDisk: 'kv-objects' },
          },
        },
        { name: 'kv-objects', disk: { path: objects, writable: true } },
        ...blobServices,
      ],
      socket: engineSocket('kv', socketDir, 'kv'),
      directories: [objects, blobs],
    };
  },
};
