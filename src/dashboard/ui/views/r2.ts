import { ApiError, client, enc, get, put, V4 } from '../api.ts';
import { h, replace } from '../dom.ts';
import { go, href } from '../router.ts';
import { acct, state } from '../state.ts';
import {
  createBucket,
  deleteBucket,
  deleteObject,
  listBuckets,
  listObjectPage,
  type BucketCors,
  type BucketLifecycle,
} from '../../../client/index.ts';
import { renderBuckets } from './buckets.render.ts';
import { renderObjectDetails, renderObjectListing, renderObjectsPage } from './objects.render.ts';
import { renderUploader, type PickedFile } from './upload.render.ts';
import { renderBucketSettings, type Setting } from './bucket-settings.render.ts';
import { confirmDialog, errorText, notice } from '../ui-kit.ts';
import { uploadOne } from './upload.ts';

const bucketsPath = () => `${acct()}/r2/buckets`;
/** An object's API path: each key segment escaped, the slashes kept (keys are paths). */
export function objectPath(bucket: string, key: string): string {
  return `${bucketsPath()}/${enc(bucket)}/objects/${key.split('/').map(enc).join('/')}`;
}

/** "R2 Object Storage": buckets, loaded and changed through the client; buckets.render.ts draws the page. */
export async function buckets(main: HTMLElement): Promise<void> {
  const list = await listBuckets(client, state.accountId);
  replace(
    main,
    renderBuckets(list, {
      create: async (name) => {
        await createBucket(client, state.accountId, name);
        go(href('r2', name));
      },
      remove: async (name) => {
        await deleteBucket(client, state.accountId, name);
        await buckets(main);
      },
    }),
  );
}

/** The object browser: one "folder" (prefix) at a time, with upload, download, delete and metadata. */
export async function objects(main: HTMLElement, bucket: string, query: URLSearchParams): Promise<void> {
  const prefix = query.get('prefix') ?? '';
  const here = (p: string, c?: string) => `${href('r2', bucket)}?prefix=${enc(p)}${c ? `&cursor=${enc(c)}` : ''}`;
  const status = notice();
  const listing = h('div', null);
  const details = h('div', { class: 'details', 'aria-live': 'polite' });
  // The listing refreshes after uploads and deletes; the upload list (with its progress bars) stays.
  const refresh = () =>
    showListing(listing, details, status, bucket, prefix, query.get('cursor') ?? undefined, here).catch(
      (error: unknown) => status.fail(error),
    );
  await showListing(listing, details, status, bucket, prefix, query.get('cursor') ?? undefined, here);
  const parts = { uploader: uploader(bucket, prefix, () => void refresh()), status: status.element, listing, details };
  replace(main, renderObjectsPage({ bucket, prefix, folder: here }, parts));
}

async function showListing(
  listing: HTMLElement,
  details: HTMLElement,
  status: ReturnType<typeof notice>,
  bucket: string,
  prefix: string,
  cursor: string | undefined,
  here: (prefix: string, cursor?: string) => string,
): Promise<void> {
  const page = await listObjectPage(client, state.accountId, bucket, { prefix, delimiter: '/', perPage: 100, cursor });
  const again = () =>
    void showListing(listing, details, status, bucket, prefix, cursor, here).catch((error: unknown) =>
      status.fail(error),
    );
  const links = { folder: here, download: (key: string) => V4 + objectPath(bucket, key) };
  replace(
    listing,
    renderObjectListing(page, prefix, links, {
      details: (object) => replace(details, renderObjectDetails(object)),
      remove: async (key) => {
        if (!(await confirmDialog(`Delete "${key}"? This cannot be undone.`, 'Delete object'))) return;
        deleteObject(client, state.accountId, bucket, key).then(again, (error: unknown) => status.fail(error));
      },
    }),
  );
}

/**
 * Upload: files or a whole folder, picked or dropped, each with its own progress bar: one PUT, or in parts above
 * MULTIPART_THRESHOLD (./upload.ts).
 */
function uploader(bucket: string, prefix: string, done: () => void): HTMLElement {
  const start = (picked: PickedFile[]) => {
    let left = picked.length;
    for (const { file, path } of picked) {
      uploadOne(bucket, prefix + path, file, view.list).finally(() => {
        if (--left === 0) done();
      });
    }
  };
  const view = renderUploader({ pick: start, drop: (transfer) => void droppedFiles(transfer).then(start) });
  return view.element;
}

/** Files of a drop, folders walked (their paths kept, as the folder picker gives them). */
async function droppedFiles(transfer: DataTransfer | null): Promise<{ file: File; path: string }[]> {
  const out: { file: File; path: string }[] = [];
  const entries = Array.from(transfer?.items ?? [])
    .map((item) => item.webkitGetAsEntry())
    .filter((e): e is FileSystemEntry => e !== null);
  const walk = async (entry: FileSystemEntry, path: string): Promise<void> => {
    if (entry.isFile) {
      const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
      out.push({ file, path: path + entry.name });
    } else if (entry.isDirectory) {
      const reader = (entry as FileSystemDirectoryEntry).createReader();
      for (;;) {
        const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
        if (batch.length === 0) break;
        for (const child of batch) await walk(child, `${path}${entry.name}/`);
      }
    }
  };
  for (const entry of entries) await walk(entry, '');
  if (entries.length === 0) for (const file of Array.from(transfer?.files ?? [])) out.push({ file, path: file.name });
  return out;
}

/** 7003: this server has no such route (yet); any other 404 is R2's "not configured" (10059 for CORS). */
async function setting<T>(load: () => Promise<T>, unset: T): Promise<Setting<T>> {
  try {
    return { value: await load() };
  } catch (error) {
    if (error instanceof ApiError && error.status === 404 && error.code === 7003)
      return { unavailable: errorText(error) };
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    return { value: unset };
  }
}

/** Bucket settings: CORS, lifecycle rules, public access (r2.dev) and custom domains, as Cloudflare names them. */
export async function bucketSettings(main: HTMLElement, bucket: string): Promise<void> {
  const base = `${bucketsPath()}/${enc(bucket)}`;
  const [cors, lifecycle, publicAccess] = await Promise.all([
    setting(() => get<BucketCors>(`${base}/cors`), { rules: [] }),
    setting(() => get<BucketLifecycle>(`${base}/lifecycle`), { rules: [] }),
    (async () => {
      const managed = await get<{ domain: string; enabled: boolean }>(`${base}/domains/managed`);
      const custom = await get<{
        domains: { domain: string; enabled: boolean; status?: { ownership?: string } }[];
      }>(`${base}/domains/custom`).catch(() => ({ domains: [] }));
      return { managed, custom: custom.domains };
    })().then(
      (value) => ({ value }),
      (error: unknown) => ({ unavailable: errorText(error) }),
    ),
  ]);
  replace(
    main,
    renderBucketSettings(
      { bucket, cors, lifecycle, publicAccess, publicPort: state.session?.endpoints?.public_port },
      {
        saveCors: (body) => put(`${base}/cors`, body),
        saveLifecycle: (body) => put(`${base}/lifecycle`, body),
        setManaged: async (enabled) => {
          await put(`${base}/domains/managed`, { enabled });
          await bucketSettings(main, bucket);
        },
      },
    ),
  );
}
