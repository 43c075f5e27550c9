import type { FileHandle } from 'node:fs/promises';
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

/**
 * A byte range of a blob, as an open file: a sender can read it into buffers it reuses, instead of a
 * stream allocating a fresh buffer per chunk (see R2WireBackend). The receiver closes the handle.
 */
export interface OpenBlobFile {
  handle: FileHandle;
  offset: number;
  length: number;
}

export interface BlobWriteOptions {
  /**
   * Whose blob this is: `<account id>/<bucket name>` (an account id alone for blobs written before issue
   * 26). A store that keeps files may group a namespace's blobs in one directory (see
   * FsBlobStore.localFile); others ignore it.
   */
  namespace?: string | undefined;
}

/** A blob id that is not (or no longer) stored. */
export class BlobNotFoundError extends Error {
  override name = 'BlobNotFoundError';
}

/**
 * Immutable byte blobs addressed by id. A write is all-or-nothing: bytes become readable under their
 * id only once complete and durable (temp file, fsync, rename), and a failed source leaves nothing.
 * The filesystem implementation is the embedded default; `S3BlobStore` keeps them on an S3-compatible service.
 */
export interface BlobStore {
  /** Streams `source` into a new blob. Rejects (and stores nothing) if the source fails. */
  write(source: AsyncIterable<Uint8Array>, options?: BlobWriteOptions): Promise<StoredBlob>;
  /**
   * Optional: stores many small blobs in one go, each as durable as `write` leaves it, faster than one
   * `write` after another (FsBlobStore overlaps the files' syncs). All or nothing.
   */
  writeMany?(blobs: readonly Uint8Array[], options?: BlobWriteOptions): Promise<StoredBlob[]>;
  /** Opens a blob (or a byte range of it); rejects with BlobNotFoundError before streaming starts. */
  read(blobId: string, range?: { offset: number; length: number }): Promise<Readable>;
  /**
   * Optional fast path for small reads: the whole range in one buffer (no stream). Rejects with
   * BlobNotFoundError like `read`. Callers fall back to `read` when a store does not offer it.
   */
  readBytes?(blobId: string, range: { offset: number; length: number }): Promise<Buffer>;
  /**
   * Optional fast path for large reads by a caller with its own buffers: the open file and the span to
   * read. Rejects with BlobNotFoundError like `read`; the file stays readable if the blob is deleted.
   */
  openFile?(blobId: string, range: { offset: number; length: number }): Promise<OpenBlobFile>;
  /**
   * Optional: where a reader on this machine can open a blob itself, as a path under its namespace's
   * directory (`namespaceRoot`); undefined for a blob that has no such place.
   */
  localFile?(blobId: string): { namespace: string; path: string } | undefined;
  /** Optional: the directory that holds a namespace's blobs (made if missing). */
  namespaceRoot?(namespace: string): string | undefined;
  /** Removes blobs; unknown ids are ignored. */
  delete(blobIds: readonly string[]): Promise<void>;
  /** Every stored blob (order unspecified). */
  list(): AsyncIterable<BlobInfo>;
  /** Removes leftovers of interrupted writes started before `time`; returns how many. */
  removeTemporaryBefore(time: number): Promise<number>;
  /** Releases what the store holds open (an S3 client's sockets); called once, at shutdown. */
  close?(): void;
}

/**
 * The namespace a bucket's blobs are written under: the bucket itself, so a reader handed one bucket's
 * directory (the functions runtime, for the buckets a script is bound to) sees no other bucket's bytes.
 */
export function blobNamespace(bucket: { accountId: string; name: string }): string {
  return `${bucket.accountId}/${bucket.name}`;
}
