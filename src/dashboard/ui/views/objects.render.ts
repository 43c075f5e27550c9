import type { ObjectPage, ObjectSummary } from '../../../client/index.ts';
import { button, formatBytes, formatTime, h, table } from '../dom.ts';
import { href } from '../router.ts';
import { pageView, writeButton } from '../ui-kit.ts';

/** Where the listing's links go: a folder (and a page of it), and an object's download. */
export interface ObjectLinks {
  folder(prefix: string, cursor?: string): string;
  download(key: string): string;
}

/**
 * One "folder" of a bucket drawn from its page of the listing: folders first, then objects with download, details
 * and delete, and the next page's link; r2.ts loads the page and acts.
 */
export function renderObjectListing(
  page: ObjectPage,
  prefix: string,
  links: ObjectLinks,
  actions: { details(object: ObjectSummary): void; remove(key: string): void },
): HTMLElement[] {
  const rows = [
    ...page.folders.map((folder) => [
      h('a', { href: links.folder(folder), class: 'folder' }, `${folder.slice(prefix.length)}`),
      'Folder',
      '',
      '',
      '',
    ]),
    ...page.objects.map((object) => [
      h('span', { class: 'name' }, object.key.slice(prefix.length)),
      formatBytes(object.size),
      object.http_metadata?.contentType ?? '',
      formatTime(object.uploaded),
      h(
        'span',
        { class: 'actions' },
        h(
          'a',
          {
            href: links.download(object.key),
            download: object.key.split('/').pop() ?? 'object',
            class: 'button',
            'aria-label': `Download ${object.key}`,
          },
          'Download',
        ),
        button('Details', () => actions.details(object), { 'aria-label': `Details of ${object.key}` }),
        writeButton('Delete', () => actions.remove(object.key), { 'aria-label': `Delete ${object.key}` }),
      ),
    ]),
  ];
  const listing = table(
    `Objects in ${prefix || 'the bucket root'}`,
    ['Name', 'Size', 'Type', 'Uploaded', 'Actions'],
    rows,
  );
  return page.cursor
    ? [listing, h('p', null, h('a', { href: links.folder(prefix, page.cursor), class: 'button' }, 'Next page'))]
    : [listing];
}

/** An object's details: key, size, ETag, upload time, storage class, HTTP and custom metadata, all as text. */
export function renderObjectDetails(object: ObjectSummary): HTMLElement[] {
  const entries: [string, string][] = [
    ['Key', object.key],
    ['Size', `${formatBytes(object.size)} (${object.size} bytes)`],
    ['ETag', object.etag],
    ['Uploaded', formatTime(object.uploaded)],
    ['Storage class', object.storage_class ?? ''],
    ...Object.entries(object.http_metadata ?? {}).map(([k, v]): [string, string] => [k, String(v)]),
    ...Object.entries(object.custom_metadata ?? {}).map(([k, v]): [string, string] => [`x-amz-meta-${k}`, v]),
  ];
  return [
    h('h2', null, 'Object details'),
    h(
      'dl',
      null,
      entries.map(([k, v]) => [h('dt', null, k), h('dd', null, v)]),
    ),
  ];
}

/**
 * The object browser's frame for one folder: the path as links (each part of the prefix a folder), the way back
 * and to the settings, then the parts r2.ts fills (the uploader, the status line, the listing, the details).
 */
export function renderObjectsPage(
  where: { bucket: string; prefix: string; folder(prefix: string): string },
  parts: { uploader: HTMLElement; status: HTMLElement; listing: HTMLElement; details: HTMLElement },
): HTMLElement {
  const crumbs: HTMLElement[] = [h('a', { href: where.folder('') }, where.bucket)];
  let walked = '';
  for (const part of where.prefix.split('/').filter(Boolean)) {
    walked += `${part}/`;
    crumbs.push(h('span', { 'aria-hidden': 'true' }, ' / '), h('a', { href: where.folder(walked) }, part));
  }
  return pageView(
    `Bucket ${where.bucket}`,
    h('nav', { 'aria-label': 'Folder', class: 'crumbs' }, crumbs),
    h(
      'p',
      null,
      h('a', { href: href('r2') }, '← Buckets'),
      ' · ',
      h('a', { href: href('r2', where.bucket, 'settings') }, 'Settings'),
    ),
    parts.uploader,
    parts.status,
    parts.listing,
    parts.details,
  );
}
