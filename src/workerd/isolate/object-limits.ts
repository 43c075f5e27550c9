/**
 * Cloudflare's storage limits for Durable Objects, which workerd does not enforce itself: keys up to 2 KiB,
 * values up to 128 KiB for classes on the key-value backend and 2 MiB for SQLite-backed ones, at most 128
 * keys per `put()` of several entries, 32,768 hibernatable WebSockets per object, 10 GB per SQLite-backed
 * object. The wrapper exports each class the script hosts through
 * `limitStorage`, which makes every `put()` of its storage check its keys and values first and throw
 * Cloudflare's error, as the real storage does, before anything is written.
 */
const MAX_KEY_BYTES = 2048;
const MAX_VALUE_BYTES = 128 * 1024;
const MAX_SQLITE_VALUE_BYTES = 2 * 1024 * 1024;
const MAX_KEYS_PER_PUT = 128;
/** Cloudflare's limit of WebSockets one object may accept with the hibernation API. */
export const MAX_WEBSOCKETS_PER_OBJECT = 32_768;
/** Cloudflare's storage per SQLite-backed object: 10 GB (the server's setting may lower it). */
const MAX_SQLITE_OBJECT_BYTES = 10 * 1024 ** 3;
/** Statements that read or free space: an object at its limit still runs them (as SQLite at max_page_count). */
const FREES_OR_READS = /^\s*(?:select|pragma|explain|delete|drop)\b/i;

const encoder = new TextEncoder();

/** The size of a value as stored: exact for strings and bytes, their JSON's length for other values. */
function sizeOf(value: unknown): number {
  if (typeof value === 'string') return encoder.encode(value).byteLength;
  if (value instanceof ArrayBuffer) return value.byteLength;
  if (ArrayBuffer.isView(value)) return value.byteLength;
  try {
    const json = JSON.stringify(value);
    return json === undefined ? 0 : encoder.encode(json).byteLength;
  } catch {
    // Values JSON cannot write (cycles, BigInt, Maps) are sized by the storage itself.
    return 0;
  }
}

function checkEntry(key: unknown, value: unknown, maxValue: number): void {
  const keyBytes = encoder.encode(String(key)).byteLength;
  if (keyBytes > MAX_KEY_BYTES)
    throw new RangeError(`Keys cannot be larger than ${MAX_KEY_BYTES} bytes. A key of size ${keyBytes} was provided.`);
  const valueBytes = sizeOf(value);
  if (valueBytes > maxValue)
    throw new RangeError(`Values cannot be larger than ${maxValue} bytes. A value of size ${valueBytes} was provided.`);
}

type Put = (...args: unknown[]) => unknown;

function guardPut(target: { put?: Put } | undefined, maxValue: number, whenFull: () => void): void {
  const put = target?.put;
  if (!target || typeof put !== 'function') return;
  target.put = function (this: unknown, ...args: unknown[]) {
    whenFull();
    const [first, second] = args;
    if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
      const entries = Object.entries(first);
      if (entries.length > MAX_KEYS_PER_PUT)
        throw new RangeError(
          `put() may write at most ${MAX_KEYS_PER_PUT} keys at once; ${entries.length} were provided.`,
        );
      for (const [key, value] of entries) checkEntry(key, value, maxValue);
    } else {
      checkEntry(first, second, maxValue);
    }
    return put.apply(this, args);
  };
}

/** `acceptWebSocket()` past the object's limit throws, as Cloudflare's does, and leaves the socket unaccepted. */
function guardWebSockets(ctx: DurableObjectState, limit: number): void {
  const accept = ctx.acceptWebSocket;
  if (typeof accept !== 'function') return;
  ctx.acceptWebSocket = function (this: unknown, ...args: Parameters<typeof accept>) {
    if (ctx.getWebSockets().length >= limit)
      throw new RangeError(`A Durable Object may accept at most ${limit} WebSockets.`);
    return accept.apply(this, args);
  };
}

/**
 * A SQLite-backed object at its storage limit: writes throw SQLite's own error, as Cloudflare's do (a page
 * limit there), before anything is written; reads, deletes and drops still run, so it can make room. The
 * size is checked before each write, so the last write may pass the limit by its own size (2 MiB at most).
 */
function fullCheck(ctx: DurableObjectState, maxBytes: number): () => void {
  const sql = (ctx.storage as { sql?: SqlStorage }).sql;
  const check = () => {
    if (sql && sql.databaseSize >= maxBytes) throw new Error('database or disk is full: SQLITE_FULL');
  };
  const exec = sql?.exec;
  if (sql && typeof exec === 'function') {
    sql.exec = function (this: unknown, query: string, ...bindings: unknown[]) {
      if (!FREES_OR_READS.test(query)) check();
      return exec.call(this, query, ...bindings);
    } as typeof exec;
  }
  return check;
}

type ObjectClass = new (ctx: DurableObjectState, env: unknown) => object;

/** Limits the wrapper passes (the server's settings); Cloudflare's without them. */
export interface ObjectLimits {
  webSockets?: number;
  storageBytes?: number;
}

/** The class with its storage limited (undefined stays undefined: workerd then reports the missing class). */
export function limitStorage(Base: unknown, sqlite: boolean, limits: ObjectLimits = {}): unknown {
  if (typeof Base !== 'function') return Base;
  const maxValue = sqlite ? MAX_SQLITE_VALUE_BYTES : MAX_VALUE_BYTES;
  const { webSockets = MAX_WEBSOCKETS_PER_OBJECT, storageBytes = MAX_SQLITE_OBJECT_BYTES } = limits;
  const Limited = class extends (Base as ObjectClass) {
    constructor(ctx: DurableObjectState, env: unknown) {
      const whenFull = sqlite ? fullCheck(ctx, storageBytes) : () => undefined;
      guardPut(ctx.storage as unknown as { put: Put }, maxValue, whenFull);
      guardPut((ctx.storage as unknown as { kv?: { put: Put } }).kv, maxValue, whenFull);
      guardWebSockets(ctx, webSockets);
      super(ctx, env);
    }
  };
  Object.defineProperty(Limited, 'name', { value: (Base as { name: string }).name });
  return Limited;
}
