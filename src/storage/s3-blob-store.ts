import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import { newId } from '../shared/ids.ts';
import { BlobNotFoundError, type BlobInfo, type BlobStore, type StoredBlob } from './blob-store.ts';
import { createS3Client, ensureBucket, statusOf, type S3Settings } from './s3-client.ts';
import { uploadObject } from './s3-upload.ts';

const BLOB_ID = /^[0-9a-f]{32}$/;
/** DeleteObjects takes at most this many keys per request. */
const DELETE_BATCH = 1000;

/**
 * Blobs as objects `<prefix><id>` in one bucket of an S3-compatible service. Writes stream through one
 * part-sized buffer (see s3-upload.ts), so a blob is visible only once complete, and a failed source
 * leaves nothing (an interrupted multipart upload is aborted, or later by `removeTemporaryBefore`).
 * Ids are fresh random values, so a write never overwrites: no conditional put is needed (Swift has none).
 * Deleting a blob while a reader streams it is up to the service; those tested keep serving the GET
 * already under way. There is no `openFile`: readers stream (or use `readBytes` for small spans).
 */
export class S3BlobStore implements BlobStore {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly #settings: S3Settings;

  constructor(settings: S3Settings, client: S3Client = createS3Client(settings)) {
    this.#settings = settings;
    this.#client = client;
    this.#bucket = settings.bucket;
    this.#prefix = settings.prefix;
  }

  /** Fails with a readable message when the bucket is unreachable; creates it when missing. */
  ensureBucket(): Promise<void> {
    return ensureBucket(this.#client, this.#settings);
  }

  async write(source: AsyncIterable<Uint8Array>): Promise<StoredBlob> {
    const blobId = newId();
    const size = await uploadObject(this.#client, { Bucket: this.#bucket, Key: this.#key(blobId) }, source);
    return { blobId, size };
  }

  async read(blobId: string, range?: { offset: number; length: number }): Promise<Readable> {
    // An empty Range is not expressible in HTTP; nothing to fetch.
    if (range && range.length === 0) return Readable.from([]);
    const body = await this.#get(blobId, range);
    return body ?? Readable.from([]);
  }

  async readBytes(blobId: string, range: { offset: number; length: number }): Promise<Buffer> {
    if (range.length === 0) return Buffer.alloc(0);
    const body = await this.#get(blobId, range);
    const chunks: Buffer[] = [];
    if (body) for await (const chunk of body) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    if (bytes.length !== range.length) {
      throw new Error(`blob ${blobId}: read ${bytes.length} bytes at ${range.offset}, expected ${range.length}`);
    }
    return bytes;
  }

  async delete(blobIds: readonly string[]): Promise<void> {
    const keys = blobIds.filter((id) => BLOB_ID.test(id)).map((id) => ({ Key: this.#key(id) }));
    for (let start = 0; start < keys.length; start += DELETE_BATCH) {
      const result = await this.#client.send(
        new DeleteObjectsCommand({
          Bucket: this.#bucket,
          Delete: { Objects: keys.slice(start, start + DELETE_BATCH), Quiet: true },
        }),
      );
      // A key that is already gone is what we wanted; anything else is a failure to report.
      const failed = (result.Errors ?? []).filter((error) => error.Code !== 'NoSuchKey');
      if (failed.length > 0) {
        const first = failed[0]!;
        throw new Error(
          `S3 DeleteObjects failed for ${failed.length} key(s), e.g. ${first.Key}: ${first.Code} ${first.Message}`,
        );
      }
    }
  }

  async *list(): AsyncIterable<BlobInfo> {
    let token: string | undefined;
    do {
      const page = await this.#client.send(
        new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: this.#prefix, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) {
        const blobId = this.#idOf(object.Key);
        // LastModified is the service's clock: see docs/scale-out.md on orphan collection.
        if (blobId && object.LastModified) yield { blobId, modifiedAt: object.LastModified.getTime() };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /** Aborts the multipart uploads of blobs (under our prefix) initiated before `time`: interrupted writes. */
  async removeTemporaryBefore(time: number): Promise<number> {
    const stale: { Key: string; UploadId: string }[] = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      const page = await this.#client.send(
        new ListMultipartUploadsCommand({
          Bucket: this.#bucket,
          Prefix: this.#prefix,
          KeyMarker: keyMarker,
          UploadIdMarker: uploadIdMarker,
        }),
      );
      for (const upload of page.Uploads ?? []) {
        if (!upload.Key || !upload.UploadId || !this.#idOf(upload.Key)) continue;
        if (upload.Initiated && upload.Initiated.getTime() < time)
          stale.push({ Key: upload.Key, UploadId: upload.UploadId });
      }
      keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
      uploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
    } while (keyMarker);
    for (const upload of stale) {
      await this.#client
        .send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, ...upload }))
        .catch((error: unknown) => {
          // Completed or aborted meanwhile: nothing left to remove.
          if (statusOf(error) !== 404) throw error;
        });
    }
    return stale.length;
  }

  /** Closes the client's kept-alive sockets (at shutdown). */
  close(): void {
    this.#client.destroy();
  }

  /** The object of a blob (or a range of it), opened: fails with BlobNotFoundError before any byte. */
  async #get(blobId: string, range: { offset: number; length: number } | undefined): Promise<Readable | undefined> {
    if (!BLOB_ID.test(blobId)) throw new BlobNotFoundError(`invalid blob id ${blobId}`);
    try {
      const response = await this.#client.send(
        new GetObjectCommand({
          Bucket: this.#bucket,
          Key: this.#key(blobId),
          ...(range ? { Range: `bytes=${range.offset}-${range.offset + range.length - 1}` } : {}),
        }),
      );
      // In Node the body is the response's IncomingMessage: a Readable of the bytes as they arrive.
      return response.Body as Readable | undefined;
    } catch (error) {
      if (statusOf(error) === 404 || (error as Error).name === 'NoSuchKey') {
        throw new BlobNotFoundError(`blob ${blobId} not found`);
      }
      throw error;
    }
  }

  #key(blobId: string): string {
    return `${this.#prefix}${blobId}`;
  }

  /** The blob id of a key under our prefix, or undefined for anything else the bucket holds. */
  #idOf(key: string | undefined): string | undefined {
    if (!key?.startsWith(this.#prefix)) return undefined;
    const id = key.slice(this.#prefix.length);
    return BLOB_ID.test(id) ? id : undefined;
  }
}
