import type { Clock } from '../shared/clock.ts';
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import {
  abortUpload,
  completeUpload,
  createUpload,
  openObject,
  putObjectBytes,
  uploadPart,
  type ApiClient,
  type ObjectSummary,
} from '../client/index.ts';
import { CliError } from './errors.ts';
import { memoryPacer } from './memory-pacer.ts';
import { progressLine, progressMeter } from './progress.ts';

const MiB = 1024 * 1024;
/**
 * Files up to this size go in one PUT, larger ones in parts of at least this size (R2's minimum part is
 * 5 MiB; at most 10,000 parts, so very large files get larger parts). A part is read into memory whole and
 * at most PARALLEL_PARTS are in flight: the client's memory stays bounded whatever the file's size.
 */
export const MULTIPART_THRESHOLD = 8 * MiB;
const PARALLEL_PARTS = 2;
const MAX_PARTS = 10_000;

export function partSizeFor(size: number): number {
  return Math.max(MULTIPART_THRESHOLD, Math.ceil(size / MAX_PARTS / MiB) * MiB);
}

/** Thrown when Ctrl+C stopped a transfer: nothing is left behind (exit 130, as after SIGINT). */
export class TransferInterrupted extends CliError {
  constructor(message: string) {
    super(message, 130);
    this.name = 'TransferInterrupted';
  }
}

/** Ctrl+C (and SIGTERM) while a transfer runs: sets `stopped` instead of killing the process. */
function interruptible(): { readonly stopped: boolean; controller: AbortController; release(): void } {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return {
    get stopped() {
      return controller.signal.aborted;
    },
    controller,
    release() {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

export interface UploadTarget {
  api: ApiClient;
  accountId: string;
  bucket: string;
  key: string;
  file: string;
  size: number;
  contentType?: string | undefined;
  json: boolean;
  /** The progress line's rate and ETA. */
  clock: Clock;
}

/** Uploads a file with bounded memory: one PUT when small, else a multipart upload that Ctrl+C aborts. */
export async function uploadFile(target: UploadTarget): Promise<ObjectSummary> {
  const { api, accountId, bucket, key, size } = target;
  const progress = progressLine(`Uploading ${bucket}/${key}`, size, target.clock, target.json);
  const handle = await open(target.file, 'r');
  const signal = interruptible();
  try {
    if (size <= MULTIPART_THRESHOLD) {
      const bytes = Buffer.alloc(size);
      await handle.read(bytes, 0, size, 0);
      const stored = await putObjectBytes(api, accountId, bucket, key, bytes, target.contentType);
      progress?.add(size);
      progress?.finish();
      return stored;
    }
    const partSize = partSizeFor(size);
    const count = Math.ceil(size / partSize);
    const uploadId = await createUpload(api, accountId, bucket, key, target.contentType);
    const etags: string[] = new Array(count);
    const pace = memoryPacer();
    let next = 0;
    const worker = async () => {
      // One buffer per worker, reused for each of its parts: the part is sent before the next is read.
      const buffer = Buffer.allocUnsafe(partSize);
      while (!signal.stopped) {
        const index = next++;
        if (index >= count) return;
        const length = Math.min(partSize, size - index * partSize);
        const bytes = buffer.subarray(0, length);
        const { bytesRead } = await handle.read(bytes, 0, length, index * partSize);
        if (bytesRead !== length) throw new CliError(`${target.file} changed while it was uploaded`);
        etags[index] = await uploadPart(api, accountId, bucket, key, uploadId, index + 1, bytes);
        progress?.add(length);
        pace(length);
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(PARALLEL_PARTS, count) }, worker));
      if (signal.stopped) throw new TransferInterrupted(`upload of ${bucket}/${key} cancelled: nothing was stored`);
      const stored = await completeUpload(
        api,
        accountId,
        bucket,
        key,
        uploadId,
        etags.map((etag, i) => ({ part_number: i + 1, etag })),
      );
      progress?.finish();
      return stored;
    } catch (error) {
      // Stopped or failed: the parts sent so far are deleted with the upload.
      process.stderr.write('\r\x1b[2K');
      await abortUpload(api, accountId, bucket, key, uploadId).catch(() => undefined);
      throw error;
    }
  } finally {
    signal.release();
    await handle.close();
  }
}

/**
 * Downloads an object to a file (written as `<file>.partial`, renamed when complete: Ctrl+C or a failure
 * leaves no half file) or to stdout. The body streams with backpressure: memory stays bounded.
 */
export async function downloadObject(
  target: Omit<UploadTarget, 'size' | 'contentType' | 'file'> & { file: string | undefined },
): Promise<number> {
  const { api, accountId, bucket, key, file } = target;
  const body = await openObject(api, accountId, bucket, key);
  const length = body.headers['content-length'];
  const size = length === undefined ? undefined : Number(length);
  // Not while the object itself is printed on the same terminal.
  const shown = file !== undefined || !process.stdout.isTTY;
  const meter = shown ? progressMeter(`Downloading ${bucket}/${key}`, size, target.clock, target.json) : undefined;
  const pace = memoryPacer();
  body.on('data', (chunk: Buffer) => pace(chunk.length));
  const partial = file && `${file}.partial`;
  const output = partial ? createWriteStream(partial) : process.stdout;
  const signal = interruptible();
  try {
    const options = { signal: signal.controller.signal };
    await (meter ? pipeline(body, meter, output, options) : pipeline(body, output, options));
    if (file && partial) renameSync(partial, file);
    return size ?? 0;
  } catch (error) {
    if (partial) rmSync(partial, { force: true });
    if (signal.stopped) throw new TransferInterrupted(`download of ${bucket}/${key} cancelled: nothing was written`);
    throw error;
  } finally {
    signal.release();
  }
}
