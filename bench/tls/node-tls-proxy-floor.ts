// The floor of an HTTPS proxy in Node: node:tls in front of the same origin as Ledge and HAProxy, doing only
// what any proxy must: read a request head, send it to the origin on a kept-alive connection (taken from a
// pool shared by all clients, as Ledge's and HAProxy's are), relay the answer, framed by its Content-Length.
// No routing, no header checks, no timeouts. It reads as Ledge's data plane does (the point is what is left
// between the two): into shared buffers, with no Buffer, Readable push or 'data' event per read (client
// reads through src/proxy/raw/client-socket.ts, origin reads with `onread`); with 'data' events instead
// it costs ~30% more CPU per request. https.bench.ts runs it beside Ledge and HAProxy in the load balancer
// and handshake scenarios: what is left between it and Ledge is Ledge's own work per request.
// (One request per read: wrk -c32 sends one at a time per connection; nginx answers with Content-Length.)
// Usage (by the bench): node bench/tls/node-tls-proxy-floor.ts <certificate.pem> <key.pem> <origin port>;
// prints its port.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { createServer, type TLSSocket } from 'node:tls';
import { readIntoSharedBuffer } from '../../src/proxy/raw/client-socket.ts';

const [certificateFile, keyFile, originPort] = process.argv.slice(2);
const HEAD_END = Buffer.from('\r\n\r\n');

interface Origin {
  socket: Socket;
  /** Bytes of the answer still to come; -1 before its head. */
  remaining: number;
  client: TLSSocket | undefined;
  close: boolean;
}
const idle: Origin[] = [];
const originReads = Buffer.allocUnsafe(64 * 1024);

function connectOrigin(): Origin {
  const origin: Origin = { socket: undefined!, remaining: -1, client: undefined, close: false };
  const onRead = (bytes: number, buffer: Uint8Array) => {
    const chunk = (buffer as Buffer).subarray(0, bytes);
    if (origin.remaining < 0) {
      const end = chunk.indexOf(HEAD_END);
      const length = /\r\ncontent-length: *(\d+)/i.exec(chunk.toString('latin1', 0, end));
      origin.remaining = end + 4 + Number(length![1]);
    }
    origin.remaining -= bytes;
    const client = origin.client!;
    // Copied: the read buffer is reused by the next read, and a write may wait in the socket's queue.
    client.write(Buffer.from(chunk));
    if (origin.remaining > 0) return true;
    origin.remaining = -1;
    origin.client = undefined;
    idle.push(origin);
    if (origin.close) client.end();
    return true;
  };
  origin.socket = connect({
    port: Number(originPort),
    host: '127.0.0.1',
    noDelay: true,
    onread: { buffer: originReads, callback: onRead },
  });
  return origin;
}

const server = createServer(
  { cert: readFileSync(certificateFile!), key: readFileSync(keyFile!), ALPNProtocols: ['http/1.1'] },
  (socket) => {
    socket.on('error', () => socket.destroy());
    const onRequest = (chunk: Buffer) => {
      const text = chunk.toString('latin1', 0, chunk.indexOf(HEAD_END));
      const close = /\r\nconnection: *close/i.test(text);
      const lines = text.split('\r\n').filter((line) => !/^connection:/i.test(line));
      const origin = idle.pop() ?? connectOrigin();
      origin.client = socket;
      origin.close = close;
      origin.socket.write(`${lines.join('\r\n')}\r\nx-forwarded-proto: https\r\n\r\n`, 'latin1');
      return true;
    };
    if (!readIntoSharedBuffer(socket, onRequest)) socket.on('data', onRequest);
  },
);
server.listen(0, '127.0.0.1', () => console.log((server.address() as { port: number }).port));
// A clean exit on the bench's SIGTERM, so that --cpu-prof and the like write their files.
process.on('SIGTERM', () => process.exit(0));
