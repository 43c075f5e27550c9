import { ApiError, csrf, del, enc, parseEnvelope, post, V4 } from '../api.ts';
import { acct } from '../state.ts';
import { renderUploadRow } from './upload.render.ts';

const MiB = 1024 * 1024;
/**
 * Above this a file goes up in parts through Ledge's multipart routes (`/r2/buckets/{b}/uploads`, the ones `ledge
 * object put` uses, src/r2/upload-routes.ts): a broken connection costs one part, not the file, and files past R2's
 * 5 GiB single-upload limit can be sent. The same threshold and part size as the CLI (src/cli/object-transfer.ts).
 */
export const MULTIPART_THRESHOLD = 8 * MiB;
const MAX_PARTS = 10_000;
/** Parts in flight at once: enough to keep a link busy, few enough that one file does not starve the others. */
const PARALLEL_PARTS = 3;
/** A part that fails (connection broken, 5xx) is sent again this many times before the upload is given up. */
const PART_RETRIES = 2;

export function partSizeFor(size: number): number {
  return Math.max(MULTIPART_THRESHOLD, Math.ceil(size / MAX_PARTS / MiB) * MiB);
}

const bucketPath = (bucket: string) => `${acct()}/r2/buckets/${enc(bucket)}`;
const objectPath = (bucket: string, key: string) =>
  `${bucketPath(bucket)}/objects/${key.split('/').map(enc).join('/')}`;

/** One file's upload, with its own progress bar and state line in the list (upload.render.ts). */
export function uploadOne(bucket: string, key: string, file: File, list: HTMLElement): Promise<void> {
  const row = renderUploadRow(key, file.size);
  list.append(row.element);
  const transfer =
    file.size > MULTIPART_THRESHOLD
      ? multipart(bucket, key, file, row.progress)
      : single(bucket, key, file, row.progress);
  return transfer.then(
    () => row.done(),
    (error: unknown) => row.failed(error),
  );
}

/** One PUT of the whole file. */
async function single(bucket: string, key: string, file: File, progress: (loaded: number) => void): Promise<void> {
  await send('PUT', V4 + objectPath(bucket, key), file, progress, file.type);
}

/**
 * Create, the parts (PARALLEL_PARTS at a time, each a slice of the file: the browser reads it from disk as it
 * sends, nothing is held in memory), complete; on failure the upload is aborted so no parts are left behind.
 */
async function multipart(bucket: string, key: string, file: File, progress: (loaded: number) => void): Promise<void> {
  const uploads = `${bucketPath(bucket)}/uploads`;
  const created = await post<{ upload_id: string }>(uploads, {
    key,
    ...(file.type ? { content_type: file.type } : {}),
  });
  const uploadId = created.upload_id;
  const keyQuery = `key=${encodeURIComponent(key)}`;
  const partSize = partSizeFor(file.size);
  const count = Math.ceil(file.size / partSize);
  const loaded = new Array<number>(count).fill(0);
  const report = () => progress(loaded.reduce((sum, n) => sum + n, 0));
  const etags = new Array<string>(count);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < count; index = next++) {
      const part = file.slice(index * partSize, Math.min(file.size, (index + 1) * partSize));
      const url = `${V4}${uploads}/${enc(uploadId)}/parts/${index + 1}?${keyQuery}`;
      for (let attempt = 0; ; attempt++) {
        try {
          const answer = await send('PUT', url, part, (n) => {
            loaded[index] = n;
            report();
          });
          etags[index] = (answer as { etag: string }).etag;
          break;
        } catch (error) {
          loaded[index] = 0;
          report();
          // A refusal (4xx) will not change on a second try; a broken connection or a 5xx may.
          if (attempt >= PART_RETRIES || (error instanceof ApiError && error.status >= 400 && error.status < 500))
            throw error;
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(PARALLEL_PARTS, count) }, worker));
    await post(`${uploads}/${enc(uploadId)}/complete?${keyQuery}`, {
      parts: etags.map((etag, i) => ({ part_number: i + 1, etag })),
    });
  } catch (error) {
    await del(`${uploads}/${enc(uploadId)}?${keyQuery}`).catch(() => undefined);
    throw error;
  }
}

/** A body sent with XHR (fetch reports no upload progress); answers the envelope's result. */
function send(
  method: string,
  url: string,
  body: Blob,
  progress: (loaded: number) => void,
  contentType?: string,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    xhr.setRequestHeader('x-csrf-token', csrf());
    if (contentType) xhr.setRequestHeader('content-type', contentType);
    xhr.upload.onprogress = (event) => progress(event.loaded);
    xhr.onload = () => {
      try {
        const { result } = parseEnvelope<unknown>(xhr.status, xhr.responseText);
        progress(body.size);
        resolve(result);
      } catch (error) {
        reject(error as Error);
      }
    };
    xhr.onerror = () => reject(new Error('the connection broke'));
    xhr.send(body);
  });
}
