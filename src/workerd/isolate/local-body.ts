import { localBlobsBinding, localBucketBinding, takeBinding } from './contract.js';
import { cacheEnabled, cachedGet, cachedHead, cachedList } from './r2-cache.js';

/**
 * Lets a script's bucket bindings take large bodies from the bucket's blob files themselves instead of
 * through Ledge's server (see R2WireBackend.localReads). r2.ts applies it to the module env at load.
 *
 * Why: a GET of 1 MiB through the binding used to copy the body from the file into Node, through a unix
 * socket into workerd and out to the client; Node's share of that was about half the CPU of a request.
 *
 * How, and why it cannot be pointed at a file by user code or data (a tenant's script must read only its own buckets'
 * bytes): per bucket the script is bound to, the platform adds two hidden bindings (config/bindings/): an r2Bucket
 * binding whose requests carry a per-account key injected by workerd, and a read-only disk service on that bucket's
 * blob directory alone. This module runs before any user module, takes both out of the module `env` (so neither
 * `env`, `cloudflare:workers`' env nor any prototype reaches them) and keeps them in its closure. The patched `get`
 * of the user's binding asks the hidden binding, which the server answers, for a large whole-object get, with the
 * metadata only plus one custom metadata entry under the reserved key naming the blob's file; this module removes
 * that entry, checks the name is a blob file name (`<2 hex>/<32 hex>`, nothing else), and reads the file through the
 * disk service (in process, no copy through Node). The user's own binding (the unpatched prototype `get` included) is
 * never answered that way, and reserved keys can be neither stored nor read back (storage/validation.ts,
 * wire-object.ts).
 *
 * The object stays workerd's own R2ObjectBody (same class, metadata, `writeHttpMetadata`); only `body`,
 * `bodyUsed` and the read methods are shadowed on the instance. A file that is gone by the time the
 * isolate opens it (an overwrite, then the 2 s grace) makes the get run again with the body through the
 * server (a range from 0, which the server never answers without bytes).
 *
 * Written against the few members it uses (not workerd's types), so the server's tests can run it on
 * stand-ins of the bindings.
 */

/** What it reads of an object the hidden binding answers. */
interface HiddenObject {
  customMetadata?: Record<string, string> | undefined;
  httpMetadata?: { contentType?: string | undefined } | undefined;
}
interface HiddenBucket {
  get(key: string, options?: Record<string, unknown>): Promise<HiddenObject | null>;
  head(key: string): Promise<HiddenObject | null>;
  list(options?: Record<string, unknown>): Promise<Record<string, unknown>>;
}
interface BlobFile {
  readonly ok: boolean;
  readonly body: ReadableStream | null;
  readonly bodyUsed: boolean;
  arrayBuffer(): Promise<ArrayBuffer>;
  text(): Promise<string>;
  json(): Promise<unknown>;
}
interface BlobFiles {
  fetch(url: string): Promise<BlobFile>;
}
interface Local {
  bucket: HiddenBucket;
  blobs: BlobFiles;
}

const BLOB_FILE = /^([0-9a-f]{2})\/([0-9a-f]{32})$/;

/**
 * Takes each slot's hidden bindings out of `platformEnv` and returns `withLocalBodies(env)`, called where
 * the user's `env` is first seen (trace.ts): it patches each bucket binding once. `key` null: no local reads.
 * With `cacheKey` (the server's cacheable mark) a plain `get(key)` and `head(key)`, and a `list()` of plain
 * options, of a slot named in `slotBuckets` may be answered from the isolate's cache (r2-cache.ts).
 */
export function localBodies(
  platformEnv: unknown,
  key: string | null,
  buckets: Readonly<Record<string, number>>,
  cacheKey: string | null = null,
  slotBuckets: Readonly<Record<number, string>> = {},
): (env: Record<string, unknown>) => void {
  const take = (name: string) => takeBinding(platformEnv, name);
  const hidden = new Map<number, Local>();
  for (const slot of new Set(Object.values(buckets))) {
    const bucket = take(localBucketBinding(slot));
    const blobs = take(localBlobsBinding(slot));
    if (bucket && blobs && key !== null)
      hidden.set(slot, { bucket: bucket as HiddenBucket, blobs: blobs as BlobFiles });
  }
  const patched = new WeakSet<object>();
  let nativeBody: (() => ReadableStream | null) | undefined;

  async function localBody(object: HiddenObject, blobs: BlobFiles, again: () => Promise<unknown>): Promise<unknown> {
    // A failed precondition answers an R2Object without a body: nothing to do.
    if (!('body' in object)) return object;
    const custom = object.customMetadata;
    // A get with options the cache does not take may still be marked cacheable by the server: never shown.
    if (cacheKey !== null && custom !== undefined && cacheKey in custom) delete custom[cacheKey];
    if (custom === undefined || !(key! in custom)) return object;
    const path = custom[key!];
    delete custom[key!];
    // The server sent no bytes: end the empty native body now, so its connection is reused at once.
    nativeBody ??= Object.getOwnPropertyDescriptor(Object.getPrototypeOf(object), 'body')?.get;
    nativeBody
      ?.call(object)
      ?.cancel()
      .catch(() => {});
    const match = typeof path === 'string' ? BLOB_FILE.exec(path) : null;
    // Only a blob file's name, in its own shard: anything else is never opened (the body comes from the server).
    if (match === null || !match[2]!.startsWith(match[1]!)) return again();
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
      bytes: {
        configurable: true,
        writable: true,
        value: () => file.arrayBuffer().then((buffer) => new Uint8Array(buffer)),
      },
      text: { configurable: true, writable: true, value: () => file.text() },
      json: { configurable: true, writable: true, value: () => file.json() },
      blob: {
        configurable: true,
        writable: true,
        value: () =>
          file
            .arrayBuffer()
            .then((buffer) => new Blob([buffer], contentType === undefined ? {} : { type: contentType })),
      },
    });
    return object;
  }

  return function withLocalBodies(userEnv: Record<string, unknown>): void {
    for (const [name, slot] of Object.entries(buckets)) {
      const bucket = userEnv[name];
      const local = hidden.get(slot);
      if (local === undefined || bucket === null || typeof bucket !== 'object' || patched.has(bucket)) continue;
      patched.add(bucket);
      const cacheId = cacheKey === null ? undefined : slotBuckets[slot];
      const nativeHead = (bucket as { head?: (...args: unknown[]) => unknown }).head;
      const nativeList = (bucket as { list?: (...args: unknown[]) => unknown }).list;
      const viaServer = (key: string, options?: Record<string, unknown>) =>
        local.bucket
          .get(key, options)
          .then((object) =>
            object === null
              ? null
              : localBody(object, local.blobs, () => local.bucket.get(key, { ...options, range: { offset: 0 } })),
          );
      Object.defineProperty(bucket, 'get', {
        configurable: true,
        writable: true,
        enumerable: false,
        value: {
          get(key: string, options?: Record<string, unknown>) {
            // A plain get(key) of a string key may be answered from the isolate's cache (r2-cache.ts).
            if (cacheId === undefined || options !== undefined || typeof key !== 'string' || !cacheEnabled())
              return viaServer(key, options);
            return cachedGet(
              cacheId,
              key,
              cacheKey!,
              () => local.bucket.get(key) as ReturnType<Parameters<typeof cachedGet>[3]>,
              (object) =>
                object === null
                  ? null
                  : localBody(object as HiddenObject, local.blobs, () =>
                      local.bucket.get(key, { range: { offset: 0 } }),
                    ),
            );
          },
        }.get,
      });
      if (cacheId === undefined) continue;
      Object.defineProperty(bucket, 'head', {
        configurable: true,
        writable: true,
        enumerable: false,
        value: {
          head(key: string, ...rest: unknown[]) {
            if (typeof key !== 'string' || rest.length !== 0 || !cacheEnabled())
              return nativeHead?.call(bucket, key, ...rest);
            return cachedHead(
              cacheId,
              key,
              cacheKey!,
              () => local.bucket.head(key) as ReturnType<Parameters<typeof cachedHead>[3]>,
            );
          },
        }.head,
      });
      Object.defineProperty(bucket, 'list', {
        configurable: true,
        writable: true,
        enumerable: false,
        value: {
          list(options?: unknown, ...rest: unknown[]) {
            if (rest.length !== 0 || !cacheEnabled()) return nativeList?.call(bucket, options, ...rest);
            return cachedList(
              cacheId,
              options,
              (plain) => local.bucket.list(plain),
              () => nativeList?.call(bucket, options),
            );
          },
        }.list,
      });
    }
  };
}
