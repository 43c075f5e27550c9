import { connect as connectTcp, type Socket } from 'node:net';
import { connect } from 'node:tls';
import { Duplex } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestLedge } from '../helpers/ledge.ts';
import { startTlsLoadBalancer, type TlsLoadBalancer } from './tls-load-balancer.ts';

/**
 * A TLS connection must finish its handshake within the headers timeout (here 1 s), whether it stalls
 * before its ClientHello is whole (Ledge reads it itself) or after it (node:tls has answered and waits
 * for the client's Finished). The listener's sweep keeps that bound, not a timer per connection.
 */
const HOST = 'stall.bound.test';
let ledge: TestLedge;
let served: TlsLoadBalancer;

beforeAll(async () => {
  served = await startTlsLoadBalancer(HOST);
  ledge = served.ledge;
});

afterAll(async () => served?.close());

/** The first flight a real TLS client sends for HOST: a whole ClientHello. */
async function clientHello(): Promise<Buffer> {
  return new Promise((resolve) => {
    const wire = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, done) {
        resolve(chunk);
        done();
      },
    });
    const client = connect({ socket: wire, servername: HOST, ALPNProtocols: ['http/1.1'] });
    client.on('error', () => {});
    setImmediate(() => client.destroy());
  });
}

/** Opens a TCP connection to the TLS port, sends `bytes`, and resolves with what came back once it closes. */
function stall(bytes: Buffer | undefined): Promise<{ received: number }> {
  return new Promise((resolve, reject) => {
    let received = 0;
    const socket: Socket = connectTcp(ledge.server.platform.traffic.tlsPort!, '127.0.0.1', () => {
      if (bytes) socket.write(bytes);
    });
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.on('error', reject);
    socket.once('close', () => resolve({ received }));
  });
}

it('closes a connection that sends nothing once the handshake bound passes', { timeout: 20_000 }, async () => {
  const { received } = await stall(undefined);
  expect(received).toBe(0);
});

it('closes a connection that stalls after its ClientHello (answered by node:tls)', { timeout: 20_000 }, async () => {
  const hello = await clientHello();
  // The first half of the ClientHello: Ledge waits for the rest before choosing a certificate.
  expect((await stall(hello.subarray(0, hello.length >> 1))).received).toBe(0);
  // The whole of it: the server answers its flight, then waits for a Finished that never comes.
  expect((await stall(hello)).received).toBeGreaterThan(0);
});
