import type { Duplex } from 'node:stream';

/**
 * wrangler sends its first tail message unmasked (`mask: false`), which RFC 6455 forbids a client and
 * the `ws` server rejects (1002 "MASK must be set"); Cloudflare accepts it. This rewrites the frames a
 * client sends before `ws` reads them: an unmasked frame gets the mask bit and an all-zero key, which
 * leaves its payload as it is. Masked frames pass through unchanged.
 */
export function maskClientFrames(socket: Duplex): void {
  const rewrite = frameMasker();
  const emit = socket.emit.bind(socket) as (event: string | symbol, ...args: unknown[]) => boolean;
  socket.emit = ((event: string | symbol, ...args: unknown[]) =>
    event === 'data' && Buffer.isBuffer(args[0])
      ? emit('data', rewrite(args[0]))
      : emit(event, ...args)) as Duplex['emit'];
}

/** A stateful rewriter over the client's byte stream (frames may span chunks). */
export function frameMasker(): (chunk: Buffer) => Buffer {
  let header: number[] = [];
  let payloadLeft = 0;
  return (chunk) => {
    const out: Buffer[] = [];
    let i = 0;
    while (i < chunk.length) {
      if (payloadLeft > 0) {
        const n = Math.min(payloadLeft, chunk.length - i);
        out.push(chunk.subarray(i, i + n));
        i += n;
        payloadLeft -= n;
        continue;
      }
      header.push(chunk[i++]!);
      if (header.length < 2) continue;
      const short = header[1]! & 0x7f;
      const extended = short === 126 ? 2 : short === 127 ? 8 : 0;
      const masked = (header[1]! & 0x80) !== 0;
      if (header.length < 2 + extended + (masked ? 4 : 0)) continue;
      const bytes = Buffer.from(header);
      const length = extended === 0 ? short : extended === 2 ? bytes.readUInt16BE(2) : Number(bytes.readBigUInt64BE(2));
      if (masked) out.push(bytes);
      else {
        bytes[1] = bytes[1]! | 0x80;
        out.push(bytes, Buffer.alloc(4));
      }
      header = [];
      payloadLeft = length;
    }
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  };
}
