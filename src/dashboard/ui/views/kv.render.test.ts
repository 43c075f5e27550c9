// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import { state } from '../state.ts';
import { MAX_SHOWN_VALUE_BYTES, renderKeys, renderNamespaces, renderValue } from './kv.render.ts';
import { cellTexts, labelled, signedInAs, submit } from './render-testing.ts';

const markup = '<img src=x onerror=alert(1)>';
const namespace = { id: 'ns1', title: 'todos' };
const links = { search: (p: string, c?: string) => `#/kv/ns1?prefix=${p}&cursor=${c ?? ''}`, key: (n: string) => n };

describe('Workers KV, drawn from its data', () => {
  it('lists namespaces by name (as text), creates and renames them', async () => {
    signedInAs(state, {});
    const create = vi.fn(async () => undefined);
    const rename = vi.fn(async () => undefined);
    const view = renderNamespaces(
      { items: [{ id: 'ns1', title: markup }], page: 1, totalPages: 1, totalCount: 1 },
      { create, rename, remove: async () => undefined, show: () => undefined },
    );
    expect(cellTexts([view]).map((row) => row.slice(0, 2))).toEqual([[markup, 'ns1']]);
    expect(view.querySelector('img')).toBeNull();
    expect(view.textContent).toContain('Namespaces (1)');
    labelled(view, 'Namespace name').value = 'todos';
    submit(view);
    expect(create).toHaveBeenCalledWith('todos');

    view.querySelector<HTMLButtonElement>(`button[aria-label="Rename ${markup}"]`)!.click();
    expect(labelled(view, 'New name').value).toBe(markup);
    labelled(view, 'New name').value = 'renamed';
    view.querySelector<HTMLFormElement>(`form[aria-label="Rename ${markup}"]`)!.requestSubmit();
    await vi.waitFor(() => expect(rename).toHaveBeenCalledWith({ id: 'ns1', title: markup }, 'renamed'));
  });

  it('shows keys with their expiration and metadata as text, and pages with the cursor', () => {
    signedInAs(state, {});
    const put = vi.fn(async () => undefined);
    const view = renderKeys(
      namespace,
      {
        keys: [{ name: markup, expiration: 4102444800, metadata: { note: '<b>x</b>' } }, { name: 'plain' }],
        prefix: 'p',
        cursor: 'next-cursor',
        first: false,
      },
      links,
      { put, remove: async () => undefined, search: () => undefined },
    );
    const rows = cellTexts([view]);
    expect(rows.map((row) => [row[0], row[2]])).toEqual([
      [markup, '{"note":"<b>x</b>"}'],
      ['plain', ''],
    ]);
    expect(rows[0]![1]).not.toBe('Never');
    expect(rows[1]![1]).toBe('Never');
    expect(view.querySelector('img, b')).toBeNull();
    expect(view.querySelector('caption')!.textContent).toBe('KV pairs starting with "p"');
    const hrefs = Array.from(view.querySelectorAll('a.button')).map((a) => [a.textContent, a.getAttribute('href')]);
    expect(hrefs).toEqual([
      ['First page', '#/kv/ns1?prefix=p&cursor='],
      ['Next page', '#/kv/ns1?prefix=p&cursor=next-cursor'],
    ]);
    labelled(view, 'Key').value = 'todo:1';
    labelled<HTMLTextAreaElement>(view, 'Value').value = 'milk';
    view.querySelector<HTMLFormElement>('form[aria-label="Add entry"]')!.requestSubmit();
    expect(put).toHaveBeenCalledWith({ key: 'todo:1', value: 'milk', metadata: '' });
  });

  it('searches by key prefix', () => {
    signedInAs(state, {});
    const search = vi.fn();
    const view = renderKeys(namespace, { keys: [], prefix: '', cursor: undefined, first: true }, links, {
      put: async () => undefined,
      remove: async () => undefined,
      search,
    });
    expect(view.textContent).toContain('No keys yet.');
    expect(view.querySelectorAll('a.button')).toHaveLength(0);
    labelled(view, 'Search by key prefix').value = 'todo:';
    view.querySelector<HTMLFormElement>('form[role="search"]')!.requestSubmit();
    expect(search).toHaveBeenCalledWith('todo:');
  });

  it('shows a value as text and saves it with its metadata and expiration', async () => {
    signedInAs(state, {});
    const save = vi.fn(async () => undefined);
    const entry = { name: 'k', expiration: 4102444800, metadata: { tag: markup } };
    const view = renderValue(namespace, entry, new TextEncoder().encode(markup), {
      save,
      remove: async () => undefined,
    });
    expect(labelled<HTMLTextAreaElement>(view, 'Value').value).toBe(markup);
    expect(view.querySelector('img')).toBeNull();
    expect(JSON.parse(labelled<HTMLTextAreaElement>(view, 'Metadata').value)).toEqual({ tag: markup });
    expect(labelled(view, 'Expiration').value).toBe('4102444800');

    labelled<HTMLTextAreaElement>(view, 'Value').value = 'new';
    labelled<HTMLTextAreaElement>(view, 'Metadata').value = '{"tag":"t"}';
    labelled(view, 'Expiration').value = '';
    labelled(view, 'Expiration TTL').value = '3600';
    submit(view);
    await vi.waitFor(() => expect(view.textContent).toContain('Saved.'));
    expect(save).toHaveBeenCalledWith({
      key: 'k',
      value: 'new',
      metadata: '{"tag":"t"}',
      expiration: undefined,
      expirationTtl: 3600,
    });
  });

  it('refuses metadata that is not JSON, and will not rewrite a value that is not UTF-8', () => {
    signedInAs(state, {});
    const save = vi.fn(async () => undefined);
    const text = renderValue(namespace, { name: 'k' }, new TextEncoder().encode('v'), {
      save,
      remove: async () => undefined,
    });
    labelled<HTMLTextAreaElement>(text, 'Metadata').value = '{not json';
    submit(text);
    expect(text.querySelector('[role="alert"]')!.textContent).toBe('Metadata must be JSON.');
    expect(save).not.toHaveBeenCalled();

    const binary = renderValue(namespace, { name: 'b' }, new Uint8Array([0xff, 0xfe, 0x00]), {
      save,
      remove: async () => undefined,
    });
    expect(labelled<HTMLTextAreaElement>(binary, 'Value').readOnly).toBe(true);
    expect(binary.querySelector<HTMLButtonElement>('button[type="submit"]')!.disabled).toBe(true);
    expect(binary.textContent).toContain('not UTF-8 text');
  });

  it('offers a value over the shown size as a download through the API, never as an editable box', () => {
    signedInAs(state, {});
    const save = vi.fn(async () => undefined);
    const download = '/client/v4/accounts/a/storage/kv/namespaces/ns1/values/big%2Fdump.json';
    const size = MAX_SHOWN_VALUE_BYTES * 3;
    const view = renderValue(
      namespace,
      { name: 'big/dump.json', metadata: { v: 1 } },
      { size, download },
      {
        save,
        remove: async () => undefined,
      },
    );
    expect(view.textContent).toContain('This value is too large to show here: 3,145,728 bytes (3.0 MiB).');
    const link = view.querySelector<HTMLAnchorElement>('a[download]')!;
    expect([link.textContent, link.getAttribute('href'), link.getAttribute('download')]).toEqual([
      'Download it',
      download,
      'dump.json',
    ]);
    expect(view.querySelector('textarea#kv-value')).toBeNull();
    expect(JSON.parse(labelled<HTMLTextAreaElement>(view, 'Metadata').value)).toEqual({ v: 1 });
    expect(view.querySelector<HTMLButtonElement>('button[type="submit"]')!.disabled).toBe(true);
    submit(view);
    expect(save).not.toHaveBeenCalled();

    const unsized = renderValue(
      namespace,
      { name: 'k' },
      { size: undefined, download },
      {
        save,
        remove: async () => undefined,
      },
    );
    expect(unsized.textContent).toContain('too large to show here: more than 1.0 MiB.');
  });

  it('disables every write for a read-only token', () => {
    signedInAs(state, { read_only: true });
    const view = renderKeys(namespace, { keys: [{ name: 'a' }], prefix: '', cursor: undefined, first: true }, links, {
      put: async () => undefined,
      remove: async () => undefined,
      search: () => undefined,
    });
    expect(labelled(view, 'Key').disabled).toBe(true);
    expect(view.querySelector<HTMLButtonElement>('button[aria-label="Delete a"]')!.disabled).toBe(true);
  });
});
