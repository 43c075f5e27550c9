import { randomBytes } from 'node:crypto';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { clip, LedgeError } from '../shared/errors.ts';
import type { EngineAnswer, KvEngineClient } from './engine-client.ts';
import { KvCodes, KvErrors } from './errors.ts';
import { KV_LIMITS, utf8Length } from './limits.ts';
import type { KvNamespaceRecord, NamespacePage, SqlKvNamespaceStore } from './store.ts';

const NAMESPACE_ID = /^[0-9a-f]{32}$/;
const MAX_TITLE_LENGTH = 512;

export interface PutOptions {
  expiration?: string | undefined;
  expirationTtl?: string | undefined;
  /** The metadata as JSON text. */
  metadata?: string | undefined;
}

export interface BulkPair {
  key: string;
  value: string;
  base64?: boolean | undefined;
  expiration?: number | undefined;
  expiration_ttl?: number | undefined;
  metadata?: unknown;
}

export interface KeyPage {
  keys: { name: string; expiration?: number; metadata?: unknown }[];
  cursor: string;
}

/**
 * Workers KV: an account's namespaces (records in the database) and their keys (in the account's engine,
 * reached through the client). Every call names the account, and a namespace is looked up in it first, so no
 * id of another account's namespace reaches an engine.
 */
export class KvService {
  readonly #store: SqlKvNamespaceStore;
  readonly #engine: KvEngineClient;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #maxNamespaces: number;

  constructor(deps: {
    store: SqlKvNamespaceStore;
    engine: KvEngineClient;
    clock: Clock;
    logger: Logger;
    maxNamespacesPerAccount: number;
  }) {
    this.#store = deps.store;
    this.#engine = deps.engine;
    this.#clock = deps.clock;
    this.#logger = deps.logger;
    this.#maxNamespaces = deps.maxNamespacesPerAccount;
  }

  // ---- namespaces

  async create(accountId: string, title: string): Promise<KvNamespaceRecord> {
    checkTitle(title);
    if (await this.#store.byTitle(accountId, title)) throw KvErrors.namespaceExists(title);
    if ((await this.#store.count(accountId)) >= this.#maxNamespaces) {
      throw KvErrors.tooManyNamespaces(this.#maxNamespaces);
    }
    const record = {
      id: randomBytes(16).toString('hex'),
      account_id: accountId,
      title,
      created_at: this.#clock.now(),
    };
    await this.#store.insert(record);
    await this.#engine.prepare(accountId);
    return record;
  }

  list(accountId: string, page: NamespacePage): Promise<KvNamespaceRecord[]> {
    return this.#store.list(accountId, page);
  }

  count(accountId: string): Promise<number> {
    return this.#store.count(accountId);
  }

  async require(accountId: string, namespaceId: string): Promise<KvNamespaceRecord> {
    if (!NAMESPACE_ID.test(namespaceId)) throw KvErrors.malformedNamespaceId();
    const record = await this.#store.get(accountId, namespaceId);
    if (!record) throw KvErrors.namespaceNotFound();
    return record;
  }

  /** Whether the account has this namespace (a deploy's binding checks it). */
  async exists(accountId: string, namespaceId: string): Promise<boolean> {
    return NAMESPACE_ID.test(namespaceId) && (await this.#store.get(accountId, namespaceId)) !== undefined;
  }

  async rename(accountId: string, namespaceId: string, title: string): Promise<KvNamespaceRecord> {
    checkTitle(title);
    const record = await this.require(accountId, namespaceId);
    if (record.title === title) return record;
    if (await this.#store.byTitle(accountId, title)) throw KvErrors.namespaceExists(title);
    if (!(await this.#store.rename(accountId, namespaceId, title))) throw KvErrors.namespaceNotFound();
    return { ...record, title };
  }

  /** Deletes the record, then the namespace's keys: its id is never given out again, so nothing can see them. */
  async delete(accountId: string, namespaceId: string): Promise<void> {
    await this.require(accountId, namespaceId);
    if (!(await this.#store.delete(accountId, namespaceId))) throw KvErrors.namespaceNotFound();
    void this.#purge(accountId, namespaceId).catch((error: unknown) =>
      this.#logger.warn('the keys of a deleted KV namespace were not all removed', {
        namespace: namespaceId,
        error: String(error),
      }),
    );
  }

  async #purge(accountId: string, namespaceId: string): Promise<void> {
    for (;;) {
      const page = await this.#engineList(accountId, namespaceId, { limit: KV_LIMITS.maxListLimit });
      if (page.keys.length === 0) return;
      for (const { name } of page.keys) await this.#delete(accountId, namespaceId, name);
    }
  }

  // ---- keys and values

  async get(
    accountId: string,
    namespaceId: string,
    key: string,
  ): Promise<{ value: Uint8Array; metadata: string | undefined }> {
    await this.require(accountId, namespaceId);
    checkKey(key);
    const answer = await this.#engine.call(accountId, namespaceId, { method: 'GET', path: keyPath(key) });
    await failed(answer);
    const metadata = answer.headers['cf-kv-metadata'];
    return {
      value: new Uint8Array(await answer.body.arrayBuffer()),
      metadata: typeof metadata === 'string' ? metadata : undefined,
    };
  }

  /** A key's metadata (parsed JSON), null when it has none. */
  async metadata(accountId: string, namespaceId: string, key: string): Promise<unknown> {
    const { metadata } = await this.get(accountId, namespaceId, key);
    return metadata === undefined ? null : parseMetadata(metadata);
  }

  async put(
    accountId: string,
    namespaceId: string,
    key: string,
    value: Uint8Array,
    options: PutOptions,
  ): Promise<void> {
    await this.require(accountId, namespaceId);
    checkKey(key);
    checkValue(value.byteLength);
    if (options.metadata !== undefined) checkMetadata(options.metadata);
    await this.#put(accountId, namespaceId, key, value, options);
  }

  async #put(accountId: string, namespaceId: string, key: string, value: Uint8Array, options: PutOptions) {
    const answer = await this.#engine.call(accountId, namespaceId, {
      method: 'PUT',
      path: keyPath(key),
      query: { expiration: options.expiration, expiration_ttl: options.expirationTtl },
      headers: options.metadata === undefined ? {} : { 'cf-kv-metadata': options.metadata },
      body: value,
    });
    await failed(answer);
    await answer.body.dump();
  }

  async deleteKey(accountId: string, namespaceId: string, key: string): Promise<void> {
    await this.require(accountId, namespaceId);
    checkKey(key);
    await this.#delete(accountId, namespaceId, key);
  }

  async #delete(accountId: string, namespaceId: string, key: string): Promise<void> {
    const answer = await this.#engine.call(accountId, namespaceId, { method: 'DELETE', path: keyPath(key) });
    await failed(answer);
    await answer.body.dump();
  }

  async listKeys(
    accountId: string,
    namespaceId: string,
    options: { prefix?: string | undefined; cursor?: string | undefined; limit: number },
  ): Promise<KeyPage> {
    await this.require(accountId, namespaceId);
    if (options.prefix !== undefined && utf8Length(options.prefix) > KV_LIMITS.maxKeyBytes) {
      throw KvErrors.invalid(`prefix is longer than ${KV_LIMITS.maxKeyBytes} bytes`);
    }
    return this.#engineList(accountId, namespaceId, options);
  }

  async #engineList(
    accountId: string,
    namespaceId: string,
    options: { prefix?: string | undefined; cursor?: string | undefined; limit: number },
  ): Promise<KeyPage> {
    const answer = await this.#engine.call(accountId, namespaceId, {
      method: 'GET',
      path: '/',
      query: { prefix: options.prefix, cursor: options.cursor || undefined, key_count_limit: String(options.limit) },
    });
    await failed(answer);
    const page = (await answer.body.json()) as {
      keys: { name: string; expiration?: number; metadata?: string }[];
      list_complete: boolean;
      cursor?: string;
    };
    return {
      keys: page.keys.map(({ name, expiration, metadata }) => ({
        name,
        ...(expiration === undefined ? {} : { expiration }),
        ...(metadata === undefined ? {} : { metadata: parseMetadata(metadata) }),
      })),
      cursor: page.list_complete ? '' : (page.cursor ?? ''),
    };
  }

  /** Validates every pair first (nothing is written when one is refused), then writes them in order. */
  async bulkPut(
    accountId: string,
    namespaceId: string,
    pairs: BulkPair[],
  ): Promise<{ written: number; failed: string[] }> {
    await this.require(accountId, namespaceId);
    const prepared = pairs.map((pair) => {
      checkKey(pair.key);
      const value = pair.base64 ? decodeBase64(pair.value, pair.key) : new TextEncoder().encode(pair.value);
      checkValue(value.byteLength);
      const metadata =
        pair.metadata === undefined || pair.metadata === null ? undefined : JSON.stringify(pair.metadata);
      if (metadata !== undefined) checkMetadata(metadata);
      return {
        key: pair.key,
        value,
        options: {
          expiration: pair.expiration === undefined ? undefined : String(pair.expiration),
          expirationTtl: pair.expiration_ttl === undefined ? undefined : String(pair.expiration_ttl),
          metadata,
        },
      };
    });
    let written = 0;
    for (const pair of prepared) {
      await this.#put(accountId, namespaceId, pair.key, pair.value, pair.options);
      written++;
    }
    return { written, failed: [] };
  }

  async bulkDelete(accountId: string, namespaceId: string, keys: string[]): Promise<number> {
    await this.require(accountId, namespaceId);
    for (const key of keys) checkKey(key);
    for (const key of keys) await this.#delete(accountId, namespaceId, key);
    return keys.length;
  }

  async bulkGet(
    accountId: string,
    namespaceId: string,
    request: { keys: string[]; type?: 'text' | 'json' | undefined; withMetadata?: boolean | undefined },
  ): Promise<Record<string, unknown>> {
    await this.require(accountId, namespaceId);
    const answer = await this.#engine.call(accountId, namespaceId, {
      method: 'POST',
      path: '/bulk/get',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
    });
    await failed(answer);
    return (await answer.body.json()) as Record<string, unknown>;
  }
}

/** The engine's refusal as the API's error; a success passes. */
async function failed(answer: EngineAnswer): Promise<void> {
  if (answer.status < 300) return;
  await answer.body.dump();
  const message = answer.message || `the KV engine answered ${answer.status}`;
  if (answer.status === 404) throw KvErrors.keyNotFound();
  if (answer.status === 413) throw KvErrors.tooLarge(message);
  if (answer.status === 414) throw new LedgeError(414, KvCodes.invalidInput, message);
  if (answer.status >= 400 && answer.status < 500) throw KvErrors.invalid(message);
  throw new Error(`the KV engine failed: ${answer.status} ${message}`);
}

function keyPath(key: string): string {
  return `/${encodeURIComponent(key)}`;
}

function checkTitle(title: string): void {
  if (title.trim() === '') throw KvErrors.missingTitle();
  if (title.length > MAX_TITLE_LENGTH) throw KvErrors.invalid(`title is longer than ${MAX_TITLE_LENGTH} characters`);
}

function checkKey(key: string): void {
  if (key === '') throw KvErrors.invalid('key names must not be empty');
  if (key === '.' || key === '..') throw KvErrors.invalid(`illegal key name "${key}": please use a different name`);
  const bytes = utf8Length(key);
  if (bytes > KV_LIMITS.maxKeyBytes) {
    throw new LedgeError(
      414,
      KvCodes.invalidInput,
      `UTF-8 encoded length of ${bytes} exceeds key length limit of ${KV_LIMITS.maxKeyBytes}: ${clip(key)}`,
    );
  }
}

function checkValue(bytes: number): void {
  if (bytes > KV_LIMITS.maxValueBytes) {
    throw KvErrors.tooLarge(`value length of ${bytes} exceeds limit of ${KV_LIMITS.maxValueBytes}`);
  }
}

function checkMetadata(metadata: string): void {
  const bytes = utf8Length(metadata);
  if (bytes > KV_LIMITS.maxMetadataBytes) {
    throw KvErrors.tooLarge(`metadata length of ${bytes} exceeds limit of ${KV_LIMITS.maxMetadataBytes}`);
  }
  try {
    JSON.parse(metadata);
  } catch {
    throw KvErrors.invalid('metadata must be JSON');
  }
}

function parseMetadata(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function decodeBase64(text: string, key: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw KvErrors.invalid(`the value of ${clip(key)} is not base64`);
  return new Uint8Array(Buffer.from(text, 'base64'));
}
