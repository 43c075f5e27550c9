import { Readable } from 'node:stream';
import type { OpenBlobFile } from './blob-store.ts';

/**
 * The body of one object read (ObjectService.get and read), in the one form each sender consumes: the
 * R2 binding's wire backend and the S3 API send it with `sendBody` (shared/http-listener/send-body.ts), the v4 object
 * route, public buckets and copies take it as a stream (`bodyStream`), and whoever does not send it
 * releases it (`releaseBody`).
 */
export type BodySource =
  /** In memory: an inline body, or a small read done in one go (sent in one write). */
  | { kind: 'bytes'; bytes: Buffer }
  /** A span of one blob's open file, read and sent through reused buffers (shared/http-listener/send-file.ts). */
  | { kind: 'file'; file: OpenBlobFile }
  /** The blob store's stream: a body over several blobs, or from a store without files (S3). */
  | { kind: 'stream'; stream: Readable }
  /**
   * No bytes here: the reader opens the blob's file itself (workerd's isolates, see ObjectService.read),
   * by its path under the owning namespace's directory.
   */
  | { kind: 'local'; localFile: { namespace: string; path: string } };

/** The bytes as a Node stream, for consumers that pipe (the v4 route, public buckets, copies). */
export function bodyStream(body: BodySource): Readable {
  switch (body.kind) {
    case 'bytes':
      return Readable.from([body.bytes], { objectMode: false });
    case 'stream':
      return body.stream;
    case 'file': {
      const { handle, offset, length } = body.file;
      if (length === 0) {
        void handle.close().catch(() => undefined);
        return Readable.from([]);
      }
      return handle.createReadStream({ start: offset, end: offset + length - 1, autoClose: true });
    }
    case 'local':
      throw new Error('a local body is read by its reader from the file, never streamed here');
  }
}

/**
 * Lets go of a body that will not be sent (HEAD, an error after the read): its stream destroyed, its file
 * closed (settles once it is).
 */
export async function releaseBody(body: BodySource): Promise<void> {
  if (body.kind === 'stream') body.stream.destroy();
  else if (body.kind === 'file') await body.file.handle.close().catch(() => undefined);
}
