import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { FileSender, FileSpan } from './send-file.ts';
import { sendStream } from './send-stream.ts';

/**
 * A response body in the forms a sender takes (storage's BodySource is one): bytes, a span of an open file,
 * a stream; `local` bodies are never sent (the reader opens the file itself).
 */
export type ResponseBody =
  | { kind: 'bytes'; bytes: Buffer }
  | { kind: 'file'; file: FileSpan }
  | { kind: 'stream'; stream: Readable }
  | { kind: 'local' };

/**
 * Sends an object read's body (storage's BodySource) as the rest of a response whose head is set, after
 * `prefix` (the wire protocol's metadata JSON; empty for S3), and ends it: bytes in one write with the
 * prefix, a file span through `files`' reused buffers, a stream piped. Settles when the last byte is handed
 * to the socket; rejects with ClientGone when the client goes away (the body is released either way).
 * Used by the R2 binding's wire backend and the S3 API.
 */
export async function sendBody(
  res: ServerResponse,
  body: ResponseBody,
  files: FileSender,
  prefix?: Buffer,
): Promise<void> {
  switch (body.kind) {
    case 'bytes':
      // A buffered body is small (small-body.ts): one write with the prefix, one syscall.
      res.end(prefix ? Buffer.concat([prefix, body.bytes]) : body.bytes);
      return;
    case 'stream':
      if (prefix) res.write(prefix);
      return sendStream(body.stream, res);
    case 'file':
      if (prefix) res.write(prefix);
      return files.send(body.file, res);
    case 'local':
      throw new Error('a local body is read by the isolate from its file, never sent');
  }
}
