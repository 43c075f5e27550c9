import { close, open, read } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/** Uploads are written in batches of up to this size (fewer thread-pool round trips, bounded memory). */
const WRITE_BATCH = 256 * 1024;

/**
 * Reads `length` bytes at `offset` of a file into one buffer: open, a single read (more only if the
 * kernel returns a short read), close. Plain callbacks rather than FileHandle or a read stream: for
 * small objects the per-read stream, AbortController and FileHandle bookkeeping cost more CPU than
 * the read itself (profile of the wire backend under GET load).
 */
export function readFileRange(path: string, offset: number, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    open(path, 'r', (openError, fd) => {
      if (openError) {
        reject(openError);
        return;
      }
      const buffer = Buffer.allocUnsafe(length);
      const finish = (error: Error | null) => close(fd, () => (error ? reject(error) : resolve(buffer)));
      const next = (filled: number): void => {
        if (filled === length) {
          finish(null);
          return;
        }
        read(fd, buffer, filled, length - filled, offset + filled, (readError, bytesRead) => {
          if (readError) finish(readError);
          else if (bytesRead === 0) finish(new Error(`blob ${path} is shorter than its recorded size`));
          else next(filled + bytesRead);
        });
      };
      next(0);
    });
  });
}

/**
 * Writes the source through `handle`, gathering small chunks into writes of up to WRITE_BATCH bytes
 * (an upload arrives in 16-64 KiB pieces; each write is a thread-pool round trip). One batch is
 * written while the next is received, so the upload keeps flowing; at most two batches are held.
 */
export async function writeAll(handle: FileHandle, source: AsyncIterable<Uint8Array>): Promise<number> {
  let position = 0;
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let writing: Promise<void> = Promise.resolve();
  const flush = async (batch: Uint8Array[], total: number, at: number) => {
    // One writev for the batch (no copy); a short write, rare for files, is finished from a copy.
    let done = (await handle.writev(batch, at)).bytesWritten;
    if (done < total) {
      const rest = Buffer.concat(batch, total);
      while (done < total) done += (await handle.write(rest, done, total - done, at + done)).bytesWritten;
    }
  };
  const startFlush = () => {
    writing = flush(pending, pendingBytes, position);
    // Observed when awaited below; this only keeps a failure from being reported as unhandled meanwhile.
    writing.catch(() => undefined);
    position += pendingBytes;
    pending = [];
    pendingBytes = 0;
  };
  for await (const chunk of source) {
    if (chunk.byteLength === 0) continue;
    pending.push(chunk);
    pendingBytes += chunk.byteLength;
    if (pendingBytes >= WRITE_BATCH) {
      await writing;
      startFlush();
    }
  }
  await writing;
  if (pendingBytes > 0) {
    startFlush();
    await writing;
  }
  return position;
}
