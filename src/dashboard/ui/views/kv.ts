import { client, del, enc, get, page, post, put } from '../api.ts';
import { readEnvelope } from '../../../client/index.ts';
import { replace } from '../dom.ts';
import { go, href } from '../router.ts';
import { acct } from '../state.ts';
import {
  renderKeys,
  renderNamespaces,
  renderValue,
  type KeyEntry,
  type Namespace,
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
  const bytes = new Uint8Array(await response.arrayBuffer());
  const entry = listed.find((candidate) => candidate.name === key) ?? { name: key };
  replace(
    main,
    renderValue(namespace, entry, bytes, {
      save: (input) => writeValue(id, input),
      remove: async () => {
        await del(valuePath(id, key));
        go(href('kv', id));
      },
    }),
  );
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
