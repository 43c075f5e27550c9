// A script's per-isolate cache of small R2 objects (issue 31). Runs inside workerd as `__ledge/r2-cache.js`
// (isolate-modules.ts), imported by the local body module (local-body.ts), which routes a bucket binding's plain
// `get(key)` and `head(key)` through it, and by the metrics module (metrics.ts), which applies the
// server's invalidations.
//
// Why: a GET of 1 KiB through the binding cost workerd ~0.25 ms and the server ~0.1 ms per request, most of
// it the binding call itself (docs/benchmarks.md, "Functions: small requests"); a hit here costs neither.
//
// What may be cached, and for how long, is the server's decision alone: it marks an answer of the runtime's
// hidden local-read binding cacheable (one more custom metadata entry, removed here) only for plain heads and
// whole-object gets of small objects, and only when it is the store's one writer (SQLite, one node). It
// marks the key watched *before* it reads it, and every write to the key, whatever door it came through,
// waits after its commit until every workerd process has applied an invalidation naming it
// (storage/object-changes.ts, src/workerd/r2-invalidation.ts). So a write is answered only once no isolate
// holds the old copy: the next read, here or anywhere, sees it. One race is closed here: a fill whose
// answer arrives after an invalidation was applied (the read may predate the write) is not kept, which is
// what `epoch` tells.
//
// What a hit returns is R2's: the objects' own data properties are copied from the native object the fill
// returned (same names, order and attributes, fresh values per result), their prototype is workerd's own
// (GetResult / HeadResult, so `instanceof` and the class name hold), and what needs the native receiver
// (writeHttpMetadata, checksums.toJSON) is called on the cached native object, which stays usable across
// requests since it holds no I/O. The body is a native stream over a copy of the cached bytes.

/** Objects of at most this size are cached with their body (the server buffers no larger ones either). */
const MAX_BODY_BYTES = 64 * 1024;
/** What the cache may hold per isolate (bodies plus a share per entry), out of a 128 MiB heap. */
const MAX_CACHE_BYTES = 8 * 1024 * 1024;
const ENTRY_OVERHEAD = 1024;

/** What it reads of workerd's R2 objects (GetResult / HeadResult); the rest is copied as it is. */
interface NativeObject {
  [name: string]: unknown;
  customMetadata?: Record<string, string> | null | undefined;
  httpMetadata?: { contentType?: string | undefined } | undefined;
  size?: number;
  arrayBuffer?: () => Promise<ArrayBuffer>;
  writeHttpMetadata?: (headers: Headers) => void;
}
interface Entry {
  native: NativeObject;
  bytes: ArrayBuffer | undefined;
}

/** `bucket\nkey` -> { native, bytes | undefined, cost }, oldest use first. */
const entries = new Map<string, Entry & { cost: number }>();
let held = 0;
/** Bumped by every invalidation: a fill that saw it change while in flight is not kept. */
let epoch = 0;

/**
 * Set by the metrics module when it wraps the script's handlers (instrument(), metrics.ts): only then do
 * the server's invalidations reach this isolate, so only then may it cache anything.
 */
let enabled = false;
export function enableCache(): void {
  enabled = true;
}
export function cacheEnabled(): boolean {
  return enabled;
}

const id = (bucket: string, key: string) => bucket + '\n' + key;

function drop(entryId: string | undefined): void {
  if (entryId === undefined) return;
  const entry = entries.get(entryId);
  if (entry === undefined) return;
  entries.delete(entryId);
  held -= entry.cost;
}

/** Applies the server's invalidation `{ bucket: 'account/name', keys: [...] }` (metrics.ts). */
export function invalidate(message: unknown): void {
  epoch++;
  const change = message as { bucket?: unknown; keys?: unknown } | null;
  if (change === null || typeof change !== 'object' || !Array.isArray(change.keys)) {
    entries.clear();
    held = 0;
    return;
  }
  for (const key of change.keys as unknown[]) drop(id(String(change.bucket), String(key)));
}

function lookup(bucket: string, key: string, withBody: boolean): Entry | undefined {
  const entryId = id(bucket, key);
  const entry = entries.get(entryId);
  if (entry === undefined || (withBody && entry.bytes === undefined)) return undefined;
  entries.delete(entryId);
  entries.set(entryId, entry);
  return entry;
}

function remember(
  bucket: string,
  key: string,
  startEpoch: number,
  native: NativeObject,
  bytes: ArrayBuffer | undefined,
): void {
  if (epoch !== startEpoch) return;
  const cost = (bytes?.byteLength ?? 0) + ENTRY_OVERHEAD;
  const entryId = id(bucket, key);
  drop(entryId);
  entries.set(entryId, { native, bytes, cost });
  held += cost;
  while (held > MAX_CACHE_BYTES) drop(entries.keys().next().value);
}

/** Removes the server's mark; true when the answer was marked cacheable. */
function takeMark(object: NativeObject, markKey: string): boolean {
  const custom = object.customMetadata;
  if (custom === undefined || custom === null || !(markKey in custom)) return false;
  delete custom[markKey];
  return true;
}

const hidden = (value: unknown): PropertyDescriptor => ({
  value,
  writable: true,
  enumerable: false,
  configurable: true,
});

/** A native Checksums' copy: its own digests (fresh buffers), its prototype, toJSON answered by the native. */
function copyChecksums(native: unknown): unknown {
  if (native === null || typeof native !== 'object') return native;
  const copy = Object.create(Object.getPrototypeOf(native)) as object;
  for (const name of Object.keys(native)) {
    const descriptor = Object.getOwnPropertyDescriptor(native, name)!;
    const value = descriptor.value instanceof ArrayBuffer ? descriptor.value.slice(0) : descriptor.value;
    Object.defineProperty(copy, name, { ...descriptor, value });
  }
  Object.defineProperty(
    copy,
    'toJSON',
    hidden(() => (native as { toJSON(): unknown }).toJSON()),
  );
  return copy;
}

function freshValue(name: string, value: unknown): unknown {
  if (value instanceof Date) return new Date(value.getTime());
  if (name === 'checksums') return copyChecksums(value);
  if (name === 'httpMetadata' && value !== null && typeof value === 'object') {
    const copy = { ...value } as { cacheExpiry?: unknown };
    if (copy.cacheExpiry instanceof Date) copy.cacheExpiry = new Date(copy.cacheExpiry.getTime());
    return copy;
  }
  if (value !== null && typeof value === 'object') return { ...value };
  return value;
}

/** workerd's HeadResult prototype, whether the native object is a HeadResult or a GetResult. */
function headPrototype(native: object): object | null {
  const prototype = Object.getPrototypeOf(native);
  return prototype !== null && Object.hasOwn(prototype, 'body') ? Object.getPrototypeOf(prototype) : prototype;
}

function objectFrom(entry: Entry, withBody: boolean): NativeObject {
  const { native, bytes } = entry;
  const object = Object.create(withBody ? Object.getPrototypeOf(native) : headPrototype(native)) as NativeObject;
  for (const name of Object.keys(native)) {
    const descriptor = Object.getOwnPropertyDescriptor(native, name)!;
    Object.defineProperty(object, name, { ...descriptor, value: freshValue(name, descriptor.value) });
  }
  Object.defineProperty(
    object,
    'writeHttpMetadata',
    hidden((headers: Headers) => native.writeHttpMetadata!(headers)),
  );
  if (!withBody) return object;
  const file = new Response(bytes!.slice(0));
  const contentType = object.httpMetadata?.contentType;
  Object.defineProperties(object, {
    body: { configurable: true, get: () => file.body },
    bodyUsed: { configurable: true, get: () => file.bodyUsed },
    arrayBuffer: hidden(() => file.arrayBuffer()),
    bytes: hidden(() => file.arrayBuffer().then((buffer) => new Uint8Array(buffer))),
    text: hidden(() => file.text()),
    json: hidden(() => file.json()),
    blob: hidden(() =>
      file.arrayBuffer().then((buffer) => new Blob([buffer], contentType === undefined ? {} : { type: contentType })),
    ),
  });
  return object;
}

/**
 * `get(key)` without options: a hit, or a fill through `fetchHidden()` (the hidden binding's get). An answer
 * that is not marked cacheable goes to `otherwise` (the local body path) as it is.
 */
export async function cachedGet(
  bucket: string,
  key: string,
  markKey: string,
  fetchHidden: () => Promise<NativeObject | null>,
  otherwise: (object: NativeObject | null) => unknown,
): Promise<unknown> {
  const hit = lookup(bucket, key, true);
  if (hit !== undefined) return objectFrom(hit, true);
  const start = epoch;
  const object = await fetchHidden();
  if (object === null || !('body' in object) || !takeMark(object, markKey)) return otherwise(object);
  if ((object.size ?? 0) > MAX_BODY_BYTES) return otherwise(object);
  const bytes = await object.arrayBuffer!();
  const entry = { native: object, bytes };
  remember(bucket, key, start, object, bytes);
  return objectFrom(entry, true);
}

/** `head(key)`: a hit (a head or a get filled it), or a fill through the hidden binding's head. */
export async function cachedHead(
  bucket: string,
  key: string,
  markKey: string,
  headHidden: () => Promise<NativeObject | null>,
): Promise<unknown> {
  const hit = lookup(bucket, key, false);
  if (hit !== undefined) return objectFrom(hit, false);
  const start = epoch;
  const object = await headHidden();
  if (object === null || !takeMark(object, markKey)) return object;
  remember(bucket, key, start, object, undefined);
  return object;
}
