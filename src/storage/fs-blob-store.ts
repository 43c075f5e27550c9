import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { newId } from '../shared/ids.ts';
import { BlobNotFoundError, type BlobInfo, type BlobStore, type StoredBlob } from './blob-store.ts';

const BLOB_ID = /^[0-9a-f]{32}$/;

/**
 * Blobs as files: `<root>/<first two hex chars>/<id>`, written through `<root>/tmp/`. The rename is
 * the commit point of the bytes; the directory is fsynced so the rename survives a crash too.
 */
export class FsBlobStore implements BlobStore {
  readonly #root: string;
  readonly #tmp: string;
  #ready: Promise<void> | undefined;

  constructor(root: string) {
    this.#root = root;
    this.#tmp = join(root, 'tmp');
  }

  async write(source: AsyncIterable<Uint8Array>): Promise<StoredBlob> {
    await this.#ensureDirs();
    const blobId = newId();
    const tmpPath = join(this.#tmp, `${blobId}.part`);
    let size = 0;
    const counted = async function* () {
      for await (const chunk of source) {
        size += chunk.byteLength;
        yield chunk;
      }
    };
    try {
      const out = createWriteStream(tmpPath, { flags: 'wx', mode: 0o600 });
      await pipeline(counted, out);
      const handle = await open(tmpPath, 'r+');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      const dir = join(this.#root, blobId.slice(0, 2));
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await rename(tmpPath, join(dir, blobId));
      await syncDirectory(dir);
    } catch (error) {
      await rm(tmpPath, { force: true });
      throw error;
    }
    return { blobId, size };
  }

  async read(blobId: string, range?: { offset: number; length: number }): Promise<Readable> {
    if (range && range.length === 0) return Readable.from([]);
    let handle;
    try {
      handle = await open(this.#path(blobId), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobNotFoundError(`blob ${blobId} not found`);
      throw error;
    }
    // The open handle keeps the bytes readable even if the blob is deleted while streaming.
    return handle.createReadStream(
      range ? { start: range.offset, end: range.offset + range.length - 1, autoClose: true } : { autoClose: true },
    );
  }

  async delete(blobIds: readonly string[]): Promise<void> {
    await Promise.all(blobIds.map((id) => rm(this.#path(id), { force: true })));
  }

  async *list(): AsyncIterable<BlobInfo> {
    const shards = await readdir(this.#root).catch(() => [] as string[]);
    for (const shard of shards) {
      if (!/^[0-9a-f]{2}$/.test(shard)) continue;
      for (const name of await readdir(join(this.#root, shard)).catch(() => [] as string[])) {
        if (!BLOB_ID.test(name)) continue;
        const info = await stat(join(this.#root, shard, name)).catch(() => undefined);
        if (info) yield { blobId: name, modifiedAt: info.mtimeMs };
      }
    }
  }

  async removeTemporaryBefore(time: number): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.#tmp).catch(() => [] as string[])) {
      const path = join(this.#tmp, name);
      const info = await stat(path).catch(() => undefined);
      if (info && info.mtimeMs < time) {
        await rm(path, { force: true });
        removed++;
      }
    }
    return removed;
  }

  #path(blobId: string): string {
    if (!BLOB_ID.test(blobId)) throw new BlobNotFoundError(`invalid blob id ${blobId}`);
    return join(this.#root, blobId.slice(0, 2), blobId);
  }

  #ensureDirs(): Promise<void> {
    return (this.#ready ??= mkdir(this.#tmp, { recursive: true, mode: 0o700 }).then(() => undefined));
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
