import { client, enc, get } from '../api.ts';
import { replace } from '../dom.ts';
import { href } from '../router.ts';
import { acct } from '../state.ts';
import { renderNamespace, renderNamespaces, type Namespace } from './durable-objects.render.ts';

/** Objects shown per page (the API's default is 1,000). */
const OBJECTS_PER_PAGE = 100;
const namespacesPath = () => `${acct()}/workers/durable_objects/namespaces`;

/** "Durable Objects": every class of the account (the API gives at most 1,000 a page; an account has fewer). */
export async function namespaces(main: HTMLElement): Promise<void> {
  replace(main, renderNamespaces(await get<Namespace[]>(namespacesPath(), { per_page: 1000 })));
}

/** One class's objects with stored data, a page at a time after `cursor`. */
export async function namespace(main: HTMLElement, id: string, query: URLSearchParams): Promise<void> {
  const all = await get<Namespace[]>(namespacesPath(), { per_page: 1000 });
  const found = all.find((n) => n.id === id);
  if (!found) throw new Error('This Durable Object namespace does not exist on your account.');
  const cursor = query.get('cursor') ?? undefined;
  const response = await client.request<{ id: string }[]>('GET', `${namespacesPath()}/${enc(id)}/objects`, {
    query: { limit: OBJECTS_PER_PAGE, ...(cursor ? { cursor } : {}) },
  });
  const next = (response.result_info as { cursor?: string } | undefined)?.cursor || undefined;
  const here = href('durable-objects', id);
  replace(
    main,
    renderNamespace(
      found,
      { ids: response.result.map((o) => o.id), cursor: next },
      { next: (c) => `${here}?cursor=${enc(c)}`, first: cursor ? here : undefined },
    ),
  );
}
