import { localBlobsBinding, localBucketBinding } from './hidden-bindings.ts';

/** The name of the per-isolate cache module in workerd (its source: r2-cache.js, read by config.ts). */
export const R2_CACHE_MODULE = '__ledge_r2_cache.js';

/** Set when objects may be cached in the isolate (r2-cache.js): the server's mark, and each slot's bucket. */
export interface LocalCache {
  metadataKey: string;
  /** Slot -> `account/bucket`, as the server's invalidations name buckets. */
  buckets: Record<number, string>;
}

/**
 * Source of a module that lets a script's bucket bindings take large bodies from the bucket's blob
 * files themselves instead of through Ledge's server (see R2WireBackend.localReads).
 *
 * Why: a GET of 1 MiB through the binding used to copy the body from the file into Node, through a unix
 * socket into workerd and out to the client; Node's share of that was about half the CPU of a request.
 *
 * How, and why it cannot be pointed at a file by user code or data (issue 26 point 3): per bucket the
 * script is bound to, the platform adds two hidden bindings (hidden-bindings.ts): an r2Bucket binding
 * whose requests carry a per-account key injected by workerd, and a read-only disk service on that
 * bucket's blob directory alone. This module runs before any user module, takes both out of the module
 * `env` (so neither `env`, `cloudflare:workers`' env nor any prototype reaches them) and keeps them in
 * its closure. The patched `get` of the user's binding asks the hidden binding, which the server answers,
 * for a large whole-object get, with the metadata only plus one custom metadata entry under the reserved
 * key naming the blob's file; the shim removes that entry, checks the name is a blob file name
 * (`<2 hex>/<32 hex>`, nothing else), and reads the file through the disk service (in process, no copy
 * through Node). The user's own binding (the unpatched prototype `get` included) is never answered that
 * way, and reserved keys can be neither stored nor read back (storage/validation.ts, wire-object.ts).
 *
 * The object stays workerd's own R2ObjectBody (same class, metadata, `writeHttpMetadata`); only `body`,
 * `bodyUsed` and the read methods are shadowed on the instance. A file that is gone by the time the
 * isolate opens it (an overwrite, then the 2 s grace) makes the get run again with the body through the
 * server (a range from 0, which the server never answers without bytes).
 *
 * `withLocalBodies(env)` is called where the user's `env` is first seen (trace-shim.ts): it patches each
 * bucket binding once.
 */
export function localBodyShimSource(
  metadataKey: string | undefined,
  buckets: Record<string, number>,
  cache?: LocalCache,
): string {
  const slots = [...new Set(Object.values(buckets))].map((slot) => ({
    slot,
    bucket: localBucketBinding(slot),
    blobs: localBlobsBinding(slot),
  }));
  return `import { env as platformEnv } from 'cloudflare:workers';
import { cacheEnabled, cachedGet, cachedHead } from ${JSON.stringify(`./${R2_CACHE_MODULE}`)};
const KEY = ${JSON.stringify(metadataKey ?? null)};
const BUCKETS = ${JSON.stringify(buckets)};
// With a cache (r2-cache.js): the server's cacheable mark, and each slot's bucket as invalidations name it.
const CACHE_KEY = ${JSON.stringify(cache?.metadataKey ?? null)};
const SLOT_BUCKETS = ${JSON.stringify(cache?.buckets ?? {})};
const BLOB_FILE = /^([0-9a-f]{2})\\/([0-9a-f]{32})$/;
const take = (name) => {
  if (platformEnv === null || typeof platformEnv !== 'object' || !(name in platformEnv)) return undefined;
  const value = platformEnv[name];
  delete platformEnv[name];
  return value;
};
const hidden = new Map();
for (const names of ${JSON.stringify(slots)}) {
  const bucket = take(names.bucket);
  const blobs = take(names.blobs);
  if (bucket && blobs && KEY !== null) hidden.set(names.slot, { bucket, blobs });
}
const patched = new WeakSet();
let nativeBody;
export function withLocalBodies(env) {
  for (const [name, slot] of Object.entries(BUCKETS)) {
    const bucket = env[name];
    const local = hidden.get(slot);
    if (local === undefined || bucket === null || typeof bucket !== 'object' || patched.has(bucket)) continue;
    patched.add(bucket);
    const cacheId = CACHE_KEY === null ? undefined : SLOT_BUCKETS[slot];
    const nativeHead = bucket.head;
    const viaServer = (key, options) => local.bucket.get(key, options).then((object) =>
      object === null ? null : localBody(object, local.blobs, () => local.bucket.get(key, { ...options, range: { offset: 0 } })));
    Object.defineProperty(bucket, 'get', {
      configurable: true,
      writable: true,
      enumerable: false,
      value: {
        get(key, options) {
          // A plain get(key) of a string key may be answered from the isolate's cache (r2-cache.js).
          if (cacheId === undefined || options !== undefined || typeof key !== 'string' || !cacheEnabled()) return viaServer(key, options);
          return cachedGet(cacheId, key, CACHE_KEY, () => local.bucket.get(key), (object) =>
            object === null ? null : localBody(object, local.blobs, () => local.bucket.get(key, { range: { offset: 0 } })));
        },
      }.get,
    });
    if (cacheId === undefined) continue;
    Object.defineProperty(bucket, 'head', {
      configurable: true,
      writable: true,
      enumerable: false,
      value: {
        head(key) {
          if (typeof key !== 'string' || arguments.length !== 1 || !cacheEnabled()) return nativeHead.apply(bucket, arguments);
          return cachedHead(cacheId, key, CACHE_KEY, () => local.bucket.head(key));
        },
      }.head,
    });
  }
}
async function localBody(object, blobs, again) {
  // A failed precondition answers an R2Object without a body: nothing to do.
  if (!('body' in object)) return object;
  const custom = object.customMetadata;
  // A get with options the cache does not take may still be marked cacheable by the server: never shown.
  if (CACHE_KEY !== null && custom !== undefined && CACHE_KEY in custom) delete custom[CACHE_KEY];
  if (custom === undefined || !(KEY in custom)) return object;
  const path = custom[KEY];
  delete custom[KEY];
  // The server sent no bytes: end the empty native body now, so its connection is reused at once.
  nativeBody ??= Object.getOwnPropertyDescriptor(Object.getPrototypeOf(object), 'body')?.get;
  nativeBody?.call(object)?.cancel().catch(() => {});
  const match = typeof path === 'string' ? BLOB_FILE.exec(path) : null;
  // Only a blob file's name, in its own shard: anything else is never opened (the body comes from the server).
  if (match === null || !match[2].startsWith(match[1])) return again();
  const file = await blobs.fetch('http://blobs/' + path);
  if (!file.ok) {
    await file.body?.cancel();
    return again();
  }
  const contentType = object.httpMetadata?.contentType;
  Object.defineProperties(object, {
    body: { configurable: true, get: () => file.body },
    bodyUsed: { configurable: true, get: () => file.bodyUsed },
    arrayBuffer: { configurable: true, writable: true, value: () => file.arrayBuffer() },
    bytes: { configurable: true, writable: true, value: () => file.arrayBuffer().then((buffer) => new Uint8Array(buffer)) },
    text: { configurable: true, writable: true, value: () => file.text() },
    json: { configurable: true, writable: true, value: () => file.json() },
    blob: {
      configurable: true,
      writable: true,
      value: () => file.arrayBuffer().then((buffer) => new Blob([buffer], contentType === undefined ? {} : { type: contentType })),
    },
  });
  return object;
}
`;
}
