// A script's per-isolate cache of small R2 objects and listings. Runs inside workerd as
// `__ledge/r2-cache.js` (isolate-modules.ts), imported by the local body module (local-body.ts), which routes a
// bucket binding's plain `get(key)`, `head(key)` and `list(options)` through it, and by the metrics module
// (metrics.ts), which applies the server's invalidations. Listings: see cachedList at the end.
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

/**
 * `bucket\nkey` -> { native, bytes | undefined, cost } and, for listings, `bucket\t<options>` -> { native (the
 * list result), bytes undefined, cost, list: bucket }, oldest use first. Bucket ids (`account/name`) hold
 * neither separator.
 */
const entries = new Map<string, Entry & { cost: number; list?: string }>();
/** `bucket` -> the ids of its listings in `entries`: any write to the bucket drops them all. */
const listIds = new Map<string, Set<string>>();
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
  if (entry.list !== undefined) listIds.get(entry.list)?.delete(entryId);
}

/**
 * Applies the server's invalidation `{ bucket: 'account/name', keys: [...], lists?: true }` (metrics.ts):
 * `lists`, every listing of the bucket goes too; anything else, everything goes.
 */
export function invalidate(message: unknown): void {
  epoch++;
  const change = message as { bucket?: unknown; keys?: unknown; lists?: unknown } | null;
  if (change === null || typeof change !== 'object' || !Array.isArray(change.keys)) {
    entries.clear();
    listIds.clear();
    held = 0;
    return;
  }
  const bucket = String(change.bucket);
  for (const key of change.keys as unknown[]) drop(id(bucket, String(key)));
  if (change.lists === true) for (const entryId of [...(listIds.get(bucket) ?? [])]) drop(entryId);
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
  keep(id(bucket, key), { native, bytes, cost: (bytes?.byteLength ?? 0) + ENTRY_OVERHEAD });
}

function keep(entryId: string, entry: Entry & { cost: number; list?: string }): void {
  drop(entryId);
  entries.set(entryId, entry);
  held += entry.cost;
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

/** A native object's own properties, read once: a hit defines the same ones (attributes too) with fresh values. */
interface OwnProperty {
  name: string;
  value: unknown;
  writable: boolean;
  enumerable: boolean;
  configurable: boolean;
}
const ownProperties = new WeakMap<object, OwnProperty[]>();
function ownPropertiesOf(native: NativeObject): OwnProperty[] {
  let properties = ownProperties.get(native);
  if (properties === undefined) {
    properties = Object.keys(native).map((name) => {
      const { value, writable, enumerable, configurable } = Object.getOwnPropertyDescriptor(native, name)!;
      return { name, value, writable: writable!, enumerable: enumerable!, configurable: configurable! };
    });
    ownProperties.set(native, properties);
  }
  return properties;
}
/**
 * One descriptor object reused for every property a hit defines: a fresh descriptor literal per property
 * made a listing of 10 objects cost ~40% more CPU (Node 24, same V8 family as workerd's).
 */
const slot: PropertyDescriptor = { value: undefined, writable: true, enumerable: true, configurable: true };

function objectFrom(entry: Entry, withBody: boolean): NativeObject {
  const { native, bytes } = entry;
  const object = Object.create(withBody ? Object.getPrototypeOf(native) : headPrototype(native)) as NativeObject;
  for (const property of ownPropertiesOf(native)) {
    slot.value = freshValue(property.name, property.value);
    slot.writable = property.writable;
    slot.enumerable = property.enumerable;
    slot.configurable = property.configurable;
    Object.defineProperty(object, property.name, slot);
  }
  slot.value = (headers: Headers) => native.writeHttpMetadata!(headers);
  slot.writable = true;
  slot.enumerable = false;
  slot.configurable = true;
  Object.defineProperty(object, 'writeHttpMetadata', slot);
  slot.value = undefined;
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
  // A copy, as for a hit: the function may change what it got, never the cached object.
  return objectFrom({ native: object, bytes: undefined }, false);
}

/** Listings of at most this many objects and prefixes are kept ("small": a page of a prefix, not a bucket). */
const MAX_LIST_ITEMS = 100;
/** What one listed object costs the cache besides its key and custom metadata (its other fields, two objects). */
const LISTED_OBJECT_OVERHEAD = 512;
/** R2ListOptions' members, in the order they make a listing's id. */
const LIST_OPTIONS = ['limit', 'prefix', 'cursor', 'delimiter', 'startAfter', 'include'] as const;

/** What it reads of workerd's list result (R2Objects: a plain object; its objects are HeadResults). */
interface NativeList {
  [name: string]: unknown;
  objects?: NativeObject[];
  delimitedPrefixes?: string[];
}

/**
 * A listing's options as an id and a plain copy (what the hidden binding is given, so each member is read
 * once, as workerd would): undefined for anything but a plain object of R2ListOptions' own data members of
 * their types (getters, other members, other prototypes, NaN... go to workerd as they are, uncached).
 */
function listOptions(options: unknown): { id: string; copy: Record<string, unknown> | undefined } | undefined {
  if (options === undefined) return { id: '', copy: undefined };
  if (options === null || typeof options !== 'object' || Object.getPrototypeOf(options) !== Object.prototype)
    return undefined;
  const copy: Record<string, unknown> = {};
  for (const name of Reflect.ownKeys(options)) {
    const descriptor = Object.getOwnPropertyDescriptor(options, name)!;
    if (typeof name !== 'string' || !('value' in descriptor)) return undefined;
    const value: unknown = descriptor.value;
    if (name === 'limit') {
      if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
    } else if (name === 'include') {
      if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype) return undefined;
      const members = [...(value as unknown[])];
      if (!members.every((member) => typeof member === 'string') || Object.keys(value).length !== members.length)
        return undefined;
      copy[name] = members;
      continue;
    } else if (!(LIST_OPTIONS as readonly string[]).includes(name) || typeof value !== 'string') return undefined;
    copy[name] = value;
  }
  return { id: JSON.stringify(LIST_OPTIONS.map((name) => copy[name] ?? null)), copy };
}

function listCost(listed: NativeList): number {
  let cost = ENTRY_OVERHEAD;
  for (const prefix of listed.delimitedPrefixes ?? []) cost += 64 + 2 * prefix.length;
  for (const object of listed.objects ?? []) {
    cost += LISTED_OBJECT_OVERHEAD + 2 * String(object['key']).length;
    for (const [name, value] of Object.entries(object.customMetadata ?? {})) cost += 2 * (name.length + value.length);
  }
  return cost;
}

/** A fresh list result like the native one: same prototype and members, each object a copy (objectFrom). */
function listFrom(native: NativeList): unknown {
  const copy = Object.create(Object.getPrototypeOf(native)) as NativeList;
  for (const name of Object.keys(native)) {
    const descriptor = Object.getOwnPropertyDescriptor(native, name)!;
    let value: unknown = descriptor.value;
    if (name === 'objects' && Array.isArray(value))
      value = (value as NativeObject[]).map((object) => objectFrom({ native: object, bytes: undefined }, false));
    else if (Array.isArray(value)) value = [...(value as unknown[])];
    Object.defineProperty(copy, name, { ...descriptor, value });
  }
  return copy;
}

/**
 * `list(options)`: a hit, or a fill through `listHidden()` (the hidden binding's list, which the server watches
 * for the bucket: storage/object-changes.ts `watchLists`). Options the cache does not take go to `otherwise`.
 */
export async function cachedList(
  bucket: string,
  options: unknown,
  listHidden: (options: Record<string, unknown> | undefined) => Promise<NativeList>,
  otherwise: () => unknown,
): Promise<unknown> {
  const plain = listOptions(options);
  if (plain === undefined) return otherwise();
  const entryId = bucket + '\t' + plain.id;
  const hit = entries.get(entryId);
  if (hit !== undefined) {
    entries.delete(entryId);
    entries.set(entryId, hit);
    return listFrom(hit.native as NativeList);
  }
  const start = epoch;
  const listed = await listHidden(plain.copy);
  if ((listed.objects?.length ?? 0) + (listed.delimitedPrefixes?.length ?? 0) > MAX_LIST_ITEMS) return listed;
  if (epoch === start) {
    keep(entryId, { native: listed as NativeObject, bytes: undefined, cost: listCost(listed), list: bucket });
    let ids = listIds.get(bucket);
    if (ids === undefined) listIds.set(bucket, (ids = new Set()));
    ids.add(entryId);
  }
  // A copy, as for a hit: the function may change what it got, never the cached listing.
  return listFrom(listed);
}
