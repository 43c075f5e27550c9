/**
 * One read buffer shared by many sockets of the process. A read callback runs to its end before libuv reads
 * another socket, so the buffer is free again after each callback: bytes read into it are valid until the
 * callback returns, and whatever is kept past it (a partial head, pipelined bytes, a chunk a write may queue)
 * is copied out first (`owned`).
 */
export class SharedReadBuffer {
  readonly bytes: Buffer;

  constructor(size: number) {
    this.bytes = Buffer.allocUnsafe(size);
  }

  /** Whether `chunk` lies in this buffer (valid only until the read callback returns). */
  holds(chunk: Buffer): boolean {
    return chunk.buffer === this.bytes.buffer;
  }

  /** `chunk`, copied when it lies in this buffer (to keep it past the read callback). */
  owned(chunk: Buffer): Buffer {
    return chunk.buffer === this.bytes.buffer ? Buffer.from(chunk) : chunk;
  }
}
