// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import type { ObjectSummary } from '../../../client/index.ts';
import { state } from '../state.ts';
import { renderObjectDetails, renderObjectListing, renderObjectsPage } from './objects.render.ts';
import { cellTexts, signedInAs } from './render-testing.ts';

const links = {
  folder: (prefix: string, cursor?: string) => `#/r2/b?prefix=${prefix}${cursor ? `&cursor=${cursor}` : ''}`,
  download: (key: string) => `/client/v4/objects/${key}`,
};
const photo: ObjectSummary = {
  key: 'photos/cat.jpg',
  size: 2048,
  etag: 'abc',
  uploaded: '',
  http_metadata: { contentType: 'image/jpeg' },
  custom_metadata: { owner: 'me' },
};

describe('the object browser, drawn from a page of the listing', () => {
  it('shows folders first, then objects by their name under the prefix, with their type', () => {
    signedInAs(state, {});
    const view = renderObjectListing(
      { objects: [photo], folders: ['photos/2024/'], cursor: undefined },
      'photos/',
      links,
      { details: () => {}, remove: () => {} },
    );
    expect(cellTexts(view).map((row) => row.slice(0, 3))).toEqual([
      ['2024/', 'Folder', ''],
      ['cat.jpg', '2.0 KiB', 'image/jpeg'],
    ]);
    const root = view[0]!;
    expect(root.querySelector('a.folder')?.getAttribute('href')).toBe('#/r2/b?prefix=photos/2024/');
    expect(root.querySelector('a[download]')?.getAttribute('href')).toBe('/client/v4/objects/photos/cat.jpg');
    expect(view).toHaveLength(1);
  });

  it('links the next page when the listing was cut, and its buttons act on that object', () => {
    signedInAs(state, {});
    const details = vi.fn();
    const remove = vi.fn();
    const view = renderObjectListing({ objects: [photo], folders: [], cursor: 'next1' }, '', links, {
      details,
      remove,
    });
    expect(view[1]?.querySelector('a')?.getAttribute('href')).toBe('#/r2/b?prefix=&cursor=next1');
    view[0]!.querySelector<HTMLButtonElement>('[aria-label="Details of photos/cat.jpg"]')?.click();
    expect(details).toHaveBeenCalledWith(photo);
    view[0]!.querySelector<HTMLButtonElement>('[aria-label="Delete photos/cat.jpg"]')?.click();
    expect(remove).toHaveBeenCalledWith('photos/cat.jpg');
  });

  it('keeps delete off for a read-only session', () => {
    signedInAs(state, { read_only: true });
    const view = renderObjectListing({ objects: [photo], folders: [], cursor: undefined }, '', links, {
      details: () => {},
      remove: () => {},
    });
    expect(view[0]!.querySelector<HTMLButtonElement>('[aria-label="Delete photos/cat.jpg"]')?.disabled).toBe(true);
  });

  it("lists an object's details and metadata as text, markup in a key included", () => {
    const markup = '<img src=x onerror=alert(1)>';
    const [, list] = renderObjectDetails({ ...photo, key: markup });
    const pairs = Array.from(list!.querySelectorAll('dt')).map((dt) => [dt.textContent, dt.nextSibling?.textContent]);
    expect(pairs).toContainEqual(['Key', markup]);
    expect(pairs).toContainEqual(['Size', '2.0 KiB (2048 bytes)']);
    expect(pairs).toContainEqual(['contentType', 'image/jpeg']);
    expect(pairs).toContainEqual(['x-amz-meta-owner', 'me']);
    expect(list!.querySelector('img')).toBeNull();
  });
});

describe("a bucket's folder page", () => {
  it('links each part of the path to its folder, names kept as text, then the parts in order', () => {
    const parts = {
      uploader: document.createElement('section'),
      status: document.createElement('p'),
      listing: document.createElement('div'),
      details: document.createElement('div'),
    };
    const view = renderObjectsPage({ bucket: 'photos', prefix: '2026/<b>x<b>/', folder: (p) => `#f=${p}` }, parts);
    expect(view.querySelector('h1')?.textContent).toBe('Bucket photos');
    const crumbs = Array.from(view.querySelectorAll('nav[aria-label="Folder"] a')).map((a) => [
      a.textContent,
      a.getAttribute('href'),
    ]);
    expect(crumbs).toEqual([
      ['photos', '#f='],
      ['2026', '#f=2026/'],
      ['<b>x<b>', '#f=2026/<b>x<b>/'],
    ]);
    expect(view.querySelector('b')).toBeNull();
    expect(Array.from(view.querySelectorAll('p > a')).map((a) => a.textContent)).toEqual(['← Buckets', 'Settings']);
    const order = [parts.uploader, parts.status, parts.listing, parts.details];
    expect(order.every((part) => part.parentElement !== null)).toBe(true);
    expect(order.map((part) => Array.from(part.parentElement!.children).indexOf(part))).toEqual(
      [...order.map((part) => Array.from(part.parentElement!.children).indexOf(part))].sort((a, b) => a - b),
    );
  });
});
