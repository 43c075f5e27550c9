/** The binding (hidden from the user's `env`) of the account's blob directory, a read-only `disk` service. */
export const LOCAL_BLOBS_BINDING = '__LEDGE_BLOBS';

/**
 * Source of a module that lets a script's bucket bindings take large bodies from the account's blob
 * files themselves instead of through Ledge's server (see R2WireBackend.localReads).
 *
 * Why: a GET of 1 MiB through the binding used to copy the body from the file into Node, through a unix
 * socket into workerd and out to the client; Node's share of that was about half the CPU of a request.
 * Now the server answers such a get with the object's metadata only, plus one custom metadata entry under
 * a per-boot key naming the blob's file; the patched `get` removes that entry, reads the file through the
 * account's `disk` service (in process, no copy through Node) and gives the R2ObjectBody that body. The
 * object stays workerd's own R2ObjectBody (same class, metadata, `writeHttpMetadata`); only `body`,
 * `bodyUsed` and the read methods are shadowed on the instance. Only whole-object gets of a single blob
 * larger than 64 KiB are answered that way; ranges, multipart objects and small objects come as before.
 * A file that is gone by the time the isolate opens it (an overwrite, then the 2 s grace) makes the get
 * run again with the body through the server (a range from 0, which the server never answers without bytes).
 *
 * `withLocalBodies(env, copy)` is called where the user's copy of `env` is made (trace-shim.ts): it removes
 * the binding from the copy and patches each bucket binding once.
 */
export function localBodyShimSource(metadataKey: string | undefined, bucketBindings: readonly string[]): string {
  return `const BLOBS = ${JSON.stringify(LOCAL_BLOBS_BINDING)};
const KEY = ${JSON.stringify(metadataKey ?? null)};
const BUCKETS = ${JSON.stringify(bucketBindings)};
const patched = new WeakSet();
let nativeBody;
export function withLocalBodies(env, copy) {
  if (!(BLOBS in copy)) return;
  delete copy[BLOBS];
  const blobs = env[BLOBS];
  if (KEY === null || blobs === undefined) return;
  for (const name of BUCKETS) {
    const bucket = env[name];
    if (bucket === null || typeof bucket !== 'object' || patched.has(bucket)) continue;
    patched.add(bucket);
    const get = bucket.get;
    if (typeof get !== 'function') continue;
    Object.defineProperty(bucket, 'get', {
      configurable: true,
      writable: true,
      enumerable: false,
      value: {
        async get(key, options) {
          const object = await get.call(this, key, options);
          return object === null ? null : localBody(object, blobs, () => get.call(this, key, { ...options, range: { offset: 0 } }));
        },
      }.get,
    });
  }
}
async function localBody(object, blobs, again) {
  // A failed precondition answers an R2Object without a body: nothing to do.
  if (!('body' in object)) return object;
  const custom = object.customMetadata;
  const path = custom?.[KEY];
  if (typeof path !== 'string') return object;
  delete custom[KEY];
  // The server sent no bytes: end the empty native body now, so its connection is reused at once.
  nativeBody ??= Object.getOwnPropertyDescriptor(Object.getPrototypeOf(object), 'body')?.get;
  nativeBody?.call(object)?.cancel().catch(() => {});
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
