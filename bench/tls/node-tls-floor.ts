// The floor of a TLS handshake in Node: node:tls alone answering every request with 1 KiB and closing, no
// routing and no origin. https.bench.ts runs it beside Ledge and HAProxy in the handshake scenario, so the
// part of Ledge's cost per new connection that is Node's own TLS shows in the same run.
// Usage (by the bench): node bench/tls/node-tls-floor.ts <certificate.pem> <key.pem>; prints its port.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:tls';

const [certificateFile, keyFile] = process.argv.slice(2);
const answer = `HTTP/1.1 200 OK\r\ncontent-length: 1024\r\nconnection: close\r\n\r\n${'a'.repeat(1024)}`;
const server = createServer(
  { cert: readFileSync(certificateFile!), key: readFileSync(keyFile!), ALPNProtocols: ['http/1.1'] },
  (socket) => {
    socket.on('error', () => socket.destroy());
    socket.once('data', () => socket.end(answer, 'latin1'));
  },
);
server.listen(0, '127.0.0.1', () => console.log((server.address() as { port: number }).port));
