// The floor of an HTTPS proxy in Node: node:tls in front of the same origin as Ledge and HAProxy, doing only
// what any proxy must: read a request head, send it to the origin on a kept-alive connection (taken from a
// pool shared by all clients, as Ledge's and HAProxy's are), relay the answer, framed by its Content-Length.
// No routing, no header checks, no timeouts. https.bench.ts runs it beside Ledge and HAProxy in the load
// balancer and handshake scenarios: what is left between it and Ledge is Ledge's own work per request.
// (One request per read: wrk -c32 sends one at a time per connection; nginx answers with Content-Length.)
// Usage (by the bench): node bench/tls/node-tls-proxy-floor.ts <certificate.pem> <key.pem> <origin port>;
// prints its port.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { createServer, type TLSSocket } from 'node:tls';

const [certificateFile, keyFile, originPort] = process.argv.slice(2);
const HEAD_END = Buffer.from('\r\n\r\n');
const idle: Socket[] = [];

/** One exchange on an origin connection: the answer's bytes go to `client` until its length is reached. */
function exchange(client: TLSSocket, head: string, close: boolean): void {
  const origin = idle.pop() ?? connect({ port: Number(originPort), host: '127.0.0.1', noDelay: true });
  let remaining = -1;
  const onData = (chunk: Buffer) => {
    if (remaining < 0) {
      const end = chunk.indexOf(HEAD_END);
      const length = /\r\ncontent-length: *(\d+)/i.exec(chunk.toString('latin1', 0, end));
      remaining = end + 4 + Number(length![1]);
    }
    remaining -= chunk.length;
    client.write(chunk);
    if (remaining > 0) return;
    origin.off('data', onData);
    idle.push(origin);
    if (close) client.end();
  };
  origin.on('data', onData);
  origin.write(head, 'latin1');
}

const server = createServer(
  { cert: readFileSync(certificateFile!), key: readFileSync(keyFile!), ALPNProtocols: ['http/1.1'] },
  (socket) => {
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1', 0, chunk.indexOf(HEAD_END));
      const close = /\r\nconnection: *close/i.test(text);
      const lines = text.split('\r\n').filter((line) => !/^connection:/i.test(line));
      exchange(socket, `${lines.join('\r\n')}\r\nx-forwarded-proto: https\r\n\r\n`, close);
    });
  },
);
server.listen(0, '127.0.0.1', () => console.log((server.address() as { port: number }).port));
