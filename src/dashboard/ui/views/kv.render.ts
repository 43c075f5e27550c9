import { field, formatBytes, formatTime, h, table } from '../dom.ts';
import { href } from '../router.ts';
import { confirmDialog, guardForm, notice, pageView, pager, writeButton } from '../ui-kit.ts';

/** A namespace as `/storage/kv/namespaces` lists it. */
export interface Namespace {
  id: string;
  title: string;
}

/** A key as `/keys` lists it: `expiration` in seconds since the epoch. */
export interface KeyEntry {
  name: string;
  expiration?: number;
  metadata?: unknown;
}

/** What a write sends: the value as text, metadata as JSON text (empty: none), expiration in seconds. */
export interface ValueInput {
  key: string;
  value: string;
  metadata: string;
  expiration?: number | undefined;
  expirationTtl?: number | undefined;
}

/**
 * The largest value the key page shows (and so loads): a value may be 25 MiB, which a text box neither shows
 * usefully nor holds without slowing the page. A larger one is offered as a download instead.
 */
export const MAX_SHOWN_VALUE_BYTES = 1024 * 1024;

/** A value too large to show: its size (undefined: the answer did not say), and the API address that downloads it. */
export interface UnshownValue {
  size: number | undefined;
  download: string;
}

/** One page of the namespace list (page-numbered, as the API pages it). */
export interface NamespacePage {
  items: Namespace[];
  page: number;
  totalPages: number;
  totalCount: number;
}

/** "Workers KV": the account's namespaces, with create, rename and delete; kv.ts loads and saves. */
export function renderNamespaces(
  namespaces: NamespacePage,
  actions: {
    create(title: string): Promise<unknown>;
    rename(namespace: Namespace, title: string): Promise<unknown>;
    remove(namespace: Namespace): Promise<unknown>;
    show(page: number): void;
  },
): HTMLElement {
  const status = notice();
  const title = field('Namespace name', { required: true, maxlength: '512', autocomplete: 'off' });
  const form = h(
    'form',
    { class: 'card inline' },
    title.row,
    h('button', { type: 'submit', class: 'primary' }, 'Create namespace'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    actions.create(title.input.value).catch((error: unknown) => status.fail(error));
  });
  const rows = namespaces.items.map((namespace) => [
    h('a', { href: href('kv', namespace.id) }, namespace.title),
    h('code', null, namespace.id),
    h(
      'span',
      { class: 'actions' },
      writeButton('Rename', () => openRename(namespace), { 'aria-label': `Rename ${namespace.title}` }),
      writeButton(
        'Delete',
        async () => {
          const question = `Delete the namespace "${namespace.title}" and every key in it? This cannot be undone.`;
          if (!(await confirmDialog(question, 'Delete namespace'))) return;
          actions.remove(namespace).catch((error: unknown) => status.fail(error));
        },
        { 'aria-label': `Delete ${namespace.title}` },
      ),
    ),
  ]);
  const renameSlot = h('div');
  const openRename = (namespace: Namespace) => {
    const renamed = field('New name', { required: true, maxlength: '512', value: namespace.title });
    const renameStatus = notice();
    const renameForm = h(
      'form',
      { class: 'card inline', 'aria-label': `Rename ${namespace.title}` },
      renamed.row,
      h('button', { type: 'submit', class: 'primary' }, 'Save name'),
      renameStatus.element,
    );
    renameForm.addEventListener('submit', (event) => {
      event.preventDefault();
      actions.rename(namespace, renamed.input.value).catch((error: unknown) => renameStatus.fail(error));
    });
    renameSlot.replaceChildren(renameForm);
    renamed.input.focus();
  };
  return pageView(
    'Workers KV',
    guardForm(form),
    renameSlot,
    table(
      `Namespaces (${namespaces.totalCount})`,
      ['Namespace', 'ID', 'Actions'],
      rows,
      'No namespaces yet: create one above, or with wrangler kv namespace create.',
    ),
    namespaces.totalPages > 1 ? pager(namespaces.page, namespaces.totalPages, actions.show) : null,
  );
}

/** A namespace's KV pairs: search by key prefix, one page at a time (the API's cursor), and "Add entry". */
export function renderKeys(
  namespace: Namespace,
  listing: { keys: KeyEntry[]; prefix: string; cursor: string | undefined; first: boolean },
  links: { search(prefix: string, cursor?: string): string; key(name: string): string },
  actions: {
    put(input: ValueInput): Promise<unknown>;
    remove(key: string): Promise<unknown>;
    search(prefix: string): void;
  },
): HTMLElement {
  const status = notice();
  const prefix = field('Search by key prefix', { type: 'search', value: listing.prefix, autocomplete: 'off' });
  const search = h(
    'form',
    { class: 'card inline', role: 'search' },
    prefix.row,
    h('button', { type: 'submit' }, 'Search'),
  );
  search.addEventListener('submit', (event) => {
    event.preventDefault();
    actions.search(prefix.input.value);
  });
  const key = field('Key', { required: true, autocomplete: 'off' });
  const valueId = 'kv-new-value';
  const value = h('textarea', { id: valueId, rows: '3', spellcheck: 'false' });
  const add = h(
    'form',
    { class: 'card', 'aria-label': 'Add entry' },
    key.row,
    h('div', { class: 'field' }, h('label', { for: valueId }, 'Value'), value),
    h('button', { type: 'submit', class: 'primary' }, 'Add entry'),
    status.element,
  );
  add.addEventListener('submit', (event) => {
    event.preventDefault();
    actions
      .put({ key: key.input.value, value: value.value, metadata: '' })
      .catch((error: unknown) => status.fail(error));
  });
  const rows = listing.keys.map((entry) => [
    h('a', { href: links.key(entry.name) }, entry.name),
    entry.expiration ? formatTime(new Date(entry.expiration * 1000).toISOString()) : 'Never',
    entry.metadata === undefined ? '' : h('code', null, JSON.stringify(entry.metadata)),
    h(
      'span',
      { class: 'actions' },
      writeButton(
        'Delete',
        async () => {
          if (!(await confirmDialog(`Delete the key "${entry.name}"? This cannot be undone.`, 'Delete key'))) return;
          actions.remove(entry.name).catch((error: unknown) => status.fail(error));
        },
        { 'aria-label': `Delete ${entry.name}` },
      ),
    ),
  ]);
  const paging = [
    listing.first ? null : h('a', { href: links.search(listing.prefix), class: 'button' }, 'First page'),
    listing.cursor
      ? h('a', { href: links.search(listing.prefix, listing.cursor), class: 'button' }, 'Next page')
      : null,
  ];
  return pageView(
    `Workers KV: ${namespace.title}`,
    h('p', null, h('a', { href: href('kv') }, 'All namespaces'), ' · ', h('code', null, namespace.id)),
    guardForm(add),
    search,
    table(
      listing.prefix ? `KV pairs starting with "${listing.prefix}"` : 'KV pairs',
      ['Key', 'Expiration', 'Metadata', 'Actions'],
      rows,
      listing.prefix ? 'No keys start with this prefix.' : 'No keys yet.',
    ),
    h('p', { class: 'actions' }, paging),
  );
}

/**
 * One key: its value (as text; a value that is not UTF-8 is shown with replacement characters and cannot be
 * edited here, so saving never rewrites bytes the page could not show; one over MAX_SHOWN_VALUE_BYTES is a
 * download link, and cannot be edited here either), its metadata and its expiration.
 */
export function renderValue(
  namespace: Namespace,
  entry: KeyEntry,
  value: Uint8Array | UnshownValue,
  actions: { save(input: ValueInput): Promise<unknown>; remove(): Promise<unknown> },
): HTMLElement {
  const status = notice();
  const unshown = value instanceof Uint8Array ? undefined : value;
  const text = unshown ? { text: '', binary: true } : decodeText(value as Uint8Array);
  const valueId = 'kv-value';
  const metadataId = 'kv-metadata';
  const valueArea = h('textarea', { id: valueId, rows: '8', spellcheck: 'false', readonly: text.binary });
  valueArea.value = text.text;
  const metadataArea = h('textarea', {
    id: metadataId,
    rows: '3',
    spellcheck: 'false',
    'aria-describedby': `${metadataId}-hint`,
  });
  metadataArea.value = entry.metadata === undefined ? '' : JSON.stringify(entry.metadata, null, 2);
  const expiration = field(
    'Expiration',
    { type: 'number', min: '0', step: '1', value: entry.expiration ? String(entry.expiration) : '' },
    'Seconds since the epoch; empty: never expires',
  );
  const ttl = field('Expiration TTL', { type: 'number', min: '60', step: '1' }, 'Seconds from now (at least 60)');
  const form = h(
    'form',
    { class: 'card' },
    unshown
      ? h(
          'p',
          { class: 'notice' },
          unshown.size === undefined
            ? `This value is too large to show here: more than ${formatBytes(MAX_SHOWN_VALUE_BYTES)}. `
            : `This value is too large to show here: ${unshown.size.toLocaleString('en-US')} bytes (${formatBytes(unshown.size)}). `,
          h('a', { href: unshown.download, download: entry.name.split('/').pop() || 'value' }, 'Download it'),
          ', or change it with wrangler.',
        )
      : h('div', { class: 'field' }, h('label', { for: valueId }, 'Value'), valueArea),
    text.binary && !unshown
      ? h('p', { class: 'notice' }, 'This value is not UTF-8 text: it is shown here, but only wrangler can change it.')
      : null,
    h(
      'div',
      { class: 'field' },
      h('label', { for: metadataId }, 'Metadata'),
      metadataArea,
      h('small', { id: `${metadataId}-hint` }, 'JSON, up to 1,024 bytes; empty: none'),
    ),
    expiration.row,
    ttl.row,
    h('button', { type: 'submit', class: 'primary', disabled: text.binary }, 'Save'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    // Saving sends the value as the box holds it: never one the page could not show (it would be overwritten).
    if (text.binary) return;
    status.clear();
    if (metadataArea.value.trim() !== '') {
      try {
        JSON.parse(metadataArea.value);
      } catch {
        status.fail(new Error('Metadata must be JSON.'));
        return;
      }
    }
    actions
      .save({
        key: entry.name,
        value: valueArea.value,
        metadata: metadataArea.value.trim(),
        expiration: numberOrUndefined(expiration.input.value),
        expirationTtl: numberOrUndefined(ttl.input.value),
      })
      .then(() => status.ok('Saved.'))
      .catch((error: unknown) => status.fail(error));
  });
  const remove = writeButton('Delete key', async () => {
    if (!(await confirmDialog(`Delete the key "${entry.name}"? This cannot be undone.`, 'Delete key'))) return;
    actions.remove().catch((error: unknown) => status.fail(error));
  });
  return pageView(
    `Key ${entry.name}`,
    h('p', null, h('a', { href: href('kv', namespace.id) }, `Namespace ${namespace.title}`)),
    guardForm(form),
    h('p', { class: 'actions' }, remove),
  );
}

function decodeText(value: Uint8Array): { text: string; binary: boolean } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(value), binary: false };
  } catch {
    return { text: new TextDecoder().decode(value), binary: true };
  }
}

function numberOrUndefined(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}
