import { join } from 'node:path';
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
 */
export const kvEngine: EngineKind = {
  name: 'kv',
  build({ dataDir, socketDir }, files) {
    const objects = join(dataDir, 'kv', 'objects');
    const blobs = join(dataDir, 'kv', 'blobs');
    const shim = engineShim({
      engineModule: 'kv.js',
      header: KV_NAMESPACE_HEADER,
      prop: 'namespace',
      idPattern: NAMESPACE_ID,
    });
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
            ],
            // The unique key and the disk are where namespaces live: changing either starts empty.
            durableObjectNamespaces: [{ className: 'KVNamespace', uniqueKey: 'ledge-kv', enableSql: true }],
            durableObjectStorage: { localDisk: 'kv-objects' },
          },
        },
        { name: 'kv-objects', disk: { path: objects, writable: true } },
        { name: 'kv-blobs', disk: { path: blobs, writable: true } },
      ],
      socket: engineSocket('kv', socketDir, 'kv'),
      directories: [objects, blobs],
    };
  },
};
