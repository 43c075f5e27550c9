import type { IncomingMessage } from 'node:http';
import { R2Errors } from '../../storage/index.ts';

/**
 * A write request's body is `cf-r2-metadata-size` bytes of JSON followed by the value. This reads the
 * JSON and hands back the rest as a stream that continues the same request (nothing is buffered
 * beyond the chunk that straddles the boundary).
 */
export async function splitWriteBody(
  request: IncomingMessage,
  metadataSize: number,
): Promise<{ metadata: Buffer; value: AsyncIterable<Uint8Array> }> {
  const iterator = request[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const chunks: Buffer[] = [];
  let have = 0;
  while (have < metadataSize) {
    const next = await iterator.next();
    if (next.done) throw R2Errors.incompleteBody();
    chunks.push(next.value);
    have += next.value.length;
  }
  const head = Buffer.concat(chunks);
  const leftover = head.subarray(metadataSize);
  async function* value() {
    if (leftover.length > 0) yield leftover;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  return { metadata: head.subarray(0, metadataSize), value: value() };
}
