import { client, del, enc, get, page, post, put, V4 } from '../api.ts';
import { readEnvelope } from '../../../client/index.ts';
import { replace } from '../dom.ts';
import { go, href } from '../router.ts';
import { acct } from '../state.ts';
import {
  MAX_SHOWN_VALUE_BYTES,
  renderKeys,
  renderNamespaces,
  renderValue,
  type KeyEntry,
  type Namespace,
  type UnshownValue,
  type ValueInput,
} from './kv.render.ts';

const namespacesPath = () => `${acct()}/storage/kv/namespaces`;
const namespacePath = (id: string) => `${namespacesPath()}/${enc(id)}`;
const valuePath = (id: string, key: string) => `${namespacePath(id)}/values/${enc(key)}`;
const KEYS_PER_PAGE = 50;

/** "Workers KV": the namespace list, page by page, with create, rename and delete. */
export async function namespaces(main: HTMLElement, pageNumber = 1): Promise<void> {
  const list = await page<Namespace>(namespacesPath(), pageNumber, 20, { order: 'title' });
  const again = () => namespaces(main, list.page);
  replace(
    main,
    renderNamespaces(list, {
      create: async (title) => {
        await post(namespacesPath(), { title });
        await again();
      },
      rename: async (namespace, title) => {
        await put(namespacePath(namespace.id), { title });
        await again();
      },
      remove: async (namespace) => {
        await del(namespacePath(namespace.id));
        await namespaces(main);
      },
      show: (next) => void namespaces(main, next),
    }),
  );
}

/** One namespace's KV pairs: `prefix` and `cursor` come from the URL, so a page can be bookmarked and reloaded. */
export async function keys(main: HTMLElement, id: string, query: URLSearchParams): Promise<void> {
  const prefix = query.get('prefix') ?? '';
  const cursor = query.get('cursor') ?? undefined;
  const search = (p: string, c?: string) => `${href('kv', id)}?prefix=${enc(p)}${c ? `&cursor=${enc(c)}` : ''}`;
  const [namespace, listed] = await Promise.all([
    get<Namespace>(namespacePath(id)),
    client.request<KeyEntry[]>('GET', `${namespacePath(id)}/keys`, {
      query: { prefix: prefix || undefined, cursor, limit: KEYS_PER_PAGE },
    }),
  ]);
  const again = () => keys(main, id, query);
  replace(
    main,
    renderKeys(
      namespace,
      { keys: listed.result, prefix, cursor: listed.result_info?.cursor || undefined, first: cursor === undefined },
      { search, key: (name) => href('kv', id, 'key', name) },
      {
        put: async (input) => {
          await writeValue(id, input);
          await again();
        },
        remove: async (key) => {
          await del(valuePath(id, key));
          await again();
        },
        search: (p) => go(search(p)),
      },
    ),
  );
}

/** One key: its value, metadata and expiration (from the key list, the one place the API gives it). */
export async function value(main: HTMLElement, id: string, key: string): Promise<void> {
  const [namespace, listed, response] = await Promise.all([
    get<Namespace>(namespacePath(id)),
    get<KeyEntry[]>(`${namespacePath(id)}/keys`, { prefix: key, limit: 10 }),
    client.raw('GET', valuePath(id, key)),
  ]);
  if (!response.ok) await readEnvelope(response);
  const shown = await readShown(response, V4 + valuePath(id, key));
  const entry = listed.find((candidate) => candidate.name === key) ?? { name: key };
  replace(
    main,
    renderValue(namespace, entry, shown, {
      save: (input) => writeValue(id, input),
      remove: async () => {
        await del(valuePath(id, key));
        go(href('kv', id));
      },
    }),
  );
}

/**
 * The value's bytes, read no further than MAX_SHOWN_VALUE_BYTES: past that, only its size (when the answer gives its
 * length) and where to download it.
 */
async function readShown(response: Response, download: string): Promise<Uint8Array | UnshownValue> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > MAX_SHOWN_VALUE_BYTES) {
    await response.body?.cancel();
    return { size: declared, download };
  }
  const reader = response.body!.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    chunks.push(read.value);
    size += read.value.byteLength;
    if (size > MAX_SHOWN_VALUE_BYTES) {
      await reader.cancel();
      return { size: Number.isFinite(declared) ? declared : undefined, download };
    }
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** A value as the API takes it with metadata: multipart `value` and `metadata`, expiration in the query. */
async function writeValue(id: string, input: ValueInput): Promise<void> {
  const form = new FormData();
  form.append('value', input.value);
  if (input.metadata !== '') form.append('metadata', input.metadata);
  const response = await client.raw('PUT', valuePath(id, input.key), {
    query: { expiration: input.expiration, expiration_ttl: input.expirationTtl },
    rawBody: form,
  });
  await readEnvelope(response);
}
