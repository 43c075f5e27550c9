import { connect as connectTcp, type Socket } from 'node:net';
import { connect } from 'node:tls';
import { Duplex } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { createLoadBalancer, createPool, createZone, NamedOrigin } from '../load-balancing/traffic-helpers.ts';
import { makeCertificate } from './helpers.ts';

/**
 * A TLS connection must finish its handshake within the headers timeout (here 1 s), whether it stalls
 * before its ClientHello is whole (Ledge reads it itself) or after it (node:tls has answered and waits
 * for the client's Finished). The listener's sweep keeps that bound, not a timer per connection.
 */
const HOST = 'stall.bound.test';
const cert = makeCertificate([HOST]);
let ledge: TestLedge;
let origin: NamedOrigin;

beforeAll(async () => {
  ledge = await startLedge({ env: { LEDGE_HTTP_HEADERS_TIMEOUT_MS: '1000' } });
  origin = await NamedOrigin.start('o');
  const zoneId = await createZone(ledge, 'bound.test');
  const pool = await createPool(ledge, 'p', [origin]);
  await createLoadBalancer(ledge, zoneId, { name: HOST, default_pools: [pool], fallback_pool: pool });
  const uploaded = await fetch(`${ledge.apiUrl}/zones/${zoneId}/custom_certificates`, {
    method: 'POST',
    headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
    body: JSON.stringify({ certificate: cert.certificate, private_key: cert.privateKey }),
  });
  expect(uploaded.status).toBe(200);
});

afterAll(async () => {
  await ledge?.close();
  await origin?.stop();
});

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
