import type { IncomingMessage } from 'node:http';
import { R2Errors } from '../../storage/index.ts';

export interface WriteBody {
  metadata: Buffer;
  /** The value bytes, continuing the same request stream. */
  value: AsyncIterable<Uint8Array>;
  /**
   * Reads and drops what the handler left unread (a refused upload), up to `limit` bytes, so the
   * kept-alive connection stays in sync. False when more remained: the connection must be closed.
   */
  discardRest(limit: number): Promise<boolean>;
}

/**
 * Reads and drops a request body nobody consumed (a write refused before its value was looked at), up
 * to `limit` bytes. False when more remained.
 */
export async function discardRequestBody(request: IncomingMessage, limit: number): Promise<boolean> {
  let dropped = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    dropped += chunk.length;
    if (dropped > limit) return false;
  }
  return true;
}

/**
 * A write request's body is `cf-r2-metadata-size` bytes of JSON followed by the value. This reads the
 * JSON and hands back the rest as a stream that continues the same request (nothing is buffered
 * beyond the chunk that straddles the boundary).
 */
export async function splitWriteBody(request: IncomingMessage, metadataSize: number): Promise<WriteBody> {
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
  let leftover: Buffer | undefined = head.subarray(metadataSize);
  let ended = false;
  const pull = async (): Promise<Buffer | undefined> => {
    if (leftover) {
      const chunk = leftover;
      leftover = undefined;
      if (chunk.length > 0) return chunk;
    }
    if (ended) return undefined;
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      return undefined;
    }
    return next.value;
  };
  async function* value() {
    for (let chunk = await pull(); chunk; chunk = await pull()) yield chunk;
  }
  return {
    metadata: head.subarray(0, metadataSize),
    value: value(),
    async discardRest(limit) {
      let dropped = 0;
      for (let chunk = await pull(); chunk; chunk = await pull()) {
        dropped += chunk.length;
        if (dropped > limit) return false;
      }
      return true;
    },
  };
}
