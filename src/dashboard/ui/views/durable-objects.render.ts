import { h, table } from '../dom.ts';
import { href } from '../router.ts';
import { pageView } from '../ui-kit.ts';

/** A namespace as `GET /workers/durable_objects/namespaces` gives it. */
export interface Namespace {
  id: string;
  class: string;
  name: string;
  script: string;
  use_sqlite: boolean;
}

/** One page of a namespace's objects (`.../objects`): ids with stored data, and the next page's cursor. */
export interface ObjectsPage {
  ids: string[];
  cursor: string | undefined;
}

const backend = (namespace: Namespace) => (namespace.use_sqlite ? 'SQLite' : 'Key-value');

/** "Durable Objects": the account's classes, each a link to its objects; durable-objects.ts loads them. */
export function renderNamespaces(namespaces: Namespace[]): HTMLElement {
  return pageView(
    'Durable Objects',
    table(
      `Namespaces (${namespaces.length})`,
      ['Class', 'Worker', 'Storage', 'Namespace ID'],
      namespaces.map((namespace) => [
        h('a', { href: href('durable-objects', namespace.id) }, namespace.class),
        h('a', { href: href('workers', namespace.script) }, namespace.script),
        backend(namespace),
        h('code', null, namespace.id),
      ]),
      'No Durable Object classes yet: deploy a Worker whose migrations create one (new_sqlite_classes).',
    ),
  );
}

/**
 * One namespace: its objects that have stored data, a page at a time (`next` links the following page,
 * `first` the first one when this is not it).
 */
export function renderNamespace(
  namespace: Namespace,
  objects: ObjectsPage,
  links: { next(cursor: string): string; first: string | undefined },
): HTMLElement {
  const paging = h('p', null);
  if (links.first !== undefined) paging.append(h('a', { href: links.first }, 'First page'), ' ');
  if (objects.cursor) paging.append(h('a', { href: links.next(objects.cursor) }, 'Next page'));
  return pageView(
    `Durable Objects: ${namespace.class}`,
    h(
      'p',
      null,
      h('a', { href: href('durable-objects') }, 'All namespaces'),
      ' · Worker ',
      h('a', { href: href('workers', namespace.script) }, namespace.script),
      ` · ${backend(namespace)} storage · `,
      h('code', null, namespace.id),
    ),
    table(
      `Objects with stored data (${objects.ids.length}${objects.cursor ? '+' : ''})`,
      ['Object ID'],
      objects.ids.map((id) => [h('code', null, id)]),
      'No object of this class has stored data yet.',
    ),
    paging,
  );
}
