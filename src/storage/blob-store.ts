import type { Readable } from 'node:stream';

export interface StoredBlob {
  blobId: string;
  size: number;
}

export interface BlobInfo {
  blobId: string;
  /** When the blob was written (ms); orphan collection spares blobs newer than the boot. */
  modifiedAt: number;
}

/** A blob id that is not (or no longer) stored. */
export class BlobNotFoundError extends Error {
  override name = 'BlobNotFoundError';
}

/**
 * Immutable byte blobs addressed by id. A write is all-or-nothing: bytes become readable under their
 * id only once complete and durable (temp file, fsync, rename), and a failed source leaves nothing.
 * The filesystem implementation is the embedded default; an S3-compatible one can pass the same suite.
 */
export interface BlobStore {
  /** Streams `source` into a new blob. Rejects (and stores nothing) if the source fails. */
  write(source: AsyncIterable<Uint8Array>): Promise<StoredBlob>;
  /** Opens a blob (or a byte range of it); rejects with BlobNotFoundError before streaming starts. */
  read(blobId: string, range?: { offset: number; length: number }): Promise<Readable>;
  /**
   * Optional fast path for small reads: the whole range in one buffer (no stream). Rejects with
   * BlobNotFoundError like `read`. Callers fall back to `read` when a store does not offer it.
   */
  readBytes?(blobId: string, range: { offset: number; length: number }): Promise<Buffer>;
  /** Removes blobs; unknown ids are ignored. */
  delete(blobIds: readonly string[]): Promise<void>;
  /** Every stored blob (order unspecified). */
  list(): AsyncIterable<BlobInfo>;
  /** Removes leftovers of interrupted writes started before `time`; returns how many. */
  removeTemporaryBefore(time: number): Promise<number>;
}
