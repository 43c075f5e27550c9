import { readFileSync } from 'node:fs';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestLedge } from '../helpers/ledge.ts';
import { startTlsLoadBalancer, type TlsLoadBalancer } from './tls-load-balancer.ts';

/**
 * The handshake's time bound (the headers timeout, here 1 s) covers the handshake only: a kept-alive HTTPS
 * connection idle for longer is kept until the keep-alive timeout (65 s), as on the plain port. The bound
 * once stayed armed on the accepted socket under the TLS one and closed such a connection after 1 s idle.
 */
const HOST = 'busy.keep.test';
let ledge: TestLedge;
let cert: TlsLoadBalancer['cert'];
let served: TlsLoadBalancer;

beforeAll(async () => {
  served = await startTlsLoadBalancer(HOST);
  ledge = served.ledge;
  cert = served.cert;
});

afterAll(async () => served?.close());

/** One GET on an open connection; resolves with the status line once the response's end is read. */
function get(socket: TLSSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? NaN);
      if (end >= 0 && text.length >= end + 4 + length) {
        socket.off('data', onData);
        socket.off('close', onClose);
        resolve(text.slice(0, text.indexOf('\r\n')));
      }
    };
    const onClose = () => reject(new Error(`the connection closed (read so far: ${JSON.stringify(text)})`));
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.write(`GET /page HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
  });
}

it('keeps an idle HTTPS connection open past the handshake bound', { timeout: 30_000 }, async () => {
  const socket = await new Promise<TLSSocket>((resolve, reject) => {
    const s = connect(
      {
        host: '127.0.0.1',
        port: ledge.server.platform.traffic.tlsPort!,
        servername: HOST,
        ca: readFileSync(cert.caFile),
        ALPNProtocols: ['http/1.1'],
      },
      () => resolve(s),
    );
    s.on('error', reject);
  });
  try {
    expect(await get(socket)).toBe('HTTP/1.1 200 OK');
    // Idle past the 1 s bound (and its sweep), far below the keep-alive timeout.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await get(socket)).toBe('HTTP/1.1 200 OK');
  } finally {
    socket.destroy();
  }
});
