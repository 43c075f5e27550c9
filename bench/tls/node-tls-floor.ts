// The floor of HTTPS in Node: node:tls alone answering every request with 1 KiB (closing after it when the
// request says `Connection: close`), no HTTP parsing beyond that, no routing and no origin. https.bench.ts runs
// it beside Ledge and HAProxy in the load balancer and handshake scenarios, so the part of Ledge's cost that is
// Node's own TLS shows in the same run. (One request per read: wrk -c32 sends one at a time per connection.)
// Usage (by the bench): node bench/tls/node-tls-floor.ts <certificate.pem> <key.pem>; prints its port.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:tls';

const [certificateFile, keyFile] = process.argv.slice(2);
const body = 'a'.repeat(1024);
const keepAlive = Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: 1024\r\n\r\n${body}`, 'latin1');
const close = Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: 1024\r\nconnection: close\r\n\r\n${body}`, 'latin1');
const server = createServer(
  { cert: readFileSync(certificateFile!), key: readFileSync(keyFile!), ALPNProtocols: ['http/1.1'] },
  (socket) => {
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      if (chunk.includes('onnection: close')) socket.end(close);
      else socket.write(keepAlive);
    });
  },
);
server.listen(0, '127.0.0.1', () => console.log((server.address() as { port: number }).port));
