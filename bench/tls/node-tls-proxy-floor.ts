// The floor of an HTTPS proxy in Node: node:tls in front of the same origin as Ledge and HAProxy, doing only
// what any proxy must: read a request head, send it to the origin on a kept-alive connection (taken from a
// pool shared by all clients, as Ledge's and HAProxy's are), relay the answer, framed by its Content-Length.
// No routing, no header checks, no timeouts. It reads as Ledge's data plane does (the point is what is left
// between the two): into shared buffers, with no Buffer, Readable push or 'data' event per read (client
// reads through src/proxy/raw/client-socket.ts, origin reads with `onread`); with 'data' events instead
// it costs ~30% more CPU per request. https.bench.ts runs it beside Ledge and HAProxy in the load balancer
// and handshake scenarios: what is left between it and Ledge is Ledge's own work per request.
// (One request per read: wrk -c32 sends one at a time per connection; nginx answers with Content-Length.)
// It serves the same on a second, plain-HTTP port: the floor of the plain load balancer and of new plain
// connections. Usage (by the bench): node bench/tls/node-tls-proxy-floor.ts <certificate.pem> <key.pem>
// <origin port>; prints its TLS port and its plain port.
import { readFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { readIntoSharedBuffer } from '../../src/proxy/raw/client-socket.ts';

const [certificateFile, keyFile, originPort] = process.argv.slice(2);
const HEAD_END = Buffer.from('\r\n\r\n');

interface Origin {
  socket: Socket;
  /** Bytes of the answer still to come; -1 before its head. */
  remaining: number;
  client: Socket | undefined;
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

/** Serves a client connection (TLS, or plain on the second port): each request relayed to the origin. */
function serveClient(socket: Socket, scheme: 'https' | 'http'): void {
  socket.on('error', () => socket.destroy());
  const onRequest = (chunk: Buffer) => {
    const text = chunk.toString('latin1', 0, chunk.indexOf(HEAD_END));
    const close = /\r\nconnection: *close/i.test(text);
    const lines = text.split('\r\n').filter((line) => !/^connection:/i.test(line));
    const origin = idle.pop() ?? connectOrigin();
    origin.client = socket;
    origin.close = close;
    origin.socket.write(`${lines.join('\r\n')}\r\nx-forwarded-proto: ${scheme}\r\n\r\n`, 'latin1');
    return true;
  };
  if (!readIntoSharedBuffer(socket, onRequest)) socket.on('data', onRequest);
}

const tlsServer = createTlsServer(
  { cert: readFileSync(certificateFile!), key: readFileSync(keyFile!), ALPNProtocols: ['http/1.1'] },
  (socket) => serveClient(socket, 'https'),
);
// Plain sockets are accepted paused, so that they read into the shared buffer from their first byte.
const plainServer = createServer({ pauseOnConnect: true, noDelay: true }, (socket) => {
  serveClient(socket, 'http');
  socket.resume();
});
const portOf = (server: Server) => (server.address() as AddressInfo).port;
tlsServer.listen(0, '127.0.0.1', () =>
  plainServer.listen(0, '127.0.0.1', () => console.log(`${portOf(tlsServer)} ${portOf(plainServer)}`)),
);
// A clean exit on the bench's SIGTERM, so that --cpu-prof and the like write their files.
process.on('SIGTERM', () => process.exit(0));
