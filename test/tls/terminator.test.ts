import { readFileSync } from 'node:fs';
import { connect as connectTcp, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { connect as connectTls, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TlsTerminator, type TlsCredentials } from '../../src/proxy/tls/terminate.ts';
import { makeCertificate } from './helpers.ts';

/**
 * The TLS terminator reads each ClientHello into the shared read buffer (raw/client-socket.ts) before
 * node:tls gets the connection: the fast path must be the one taken on this Node (no 'readable' listener on
 * the accepted socket), and a ClientHello that arrives in parts, while other connections read into the same
 * buffer, must still reach node:tls whole.
 */
const HOST = 'term.test';
const cert = makeCertificate([HOST]);
const credentials: TlsCredentials = { cert: cert.certificate, key: cert.privateKey };
const accepted: Socket[] = [];
/** The events listened for on each accepted socket, as the terminator registered them. */
const listenedFor = new Map<Socket, string[]>();
let server: Server;
let port: number;

beforeAll(async () => {
  const terminator = new TlsTerminator(
    {
      choose: (hello) => (hello.serverName === HOST ? { kind: 'site', minVersion: 'TLSv1.2', credentials } : undefined),
    },
    10_000,
    (socket: TLSSocket) => socket.on('data', (chunk: Buffer) => socket.write(`echo ${chunk.toString()}`)),
  );
  server = createServer({ pauseOnConnect: true, allowHalfOpen: true }, (socket) => {
    accepted.push(socket);
    const events: string[] = [];
    listenedFor.set(socket, events);
    const on = socket.on.bind(socket);
    socket.on = ((event: string, listener: () => void) => {
      events.push(event);
      return on(event, listener);
    }) as typeof socket.on;
    terminator.accept(socket, 0);
    socket.on = on;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const socket of accepted) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** A TCP connection whose first write (the ClientHello) goes out in two parts, `gap` running in between. */
function splitWire(gap: () => Promise<void>): Duplex {
  const tcp = connectTcp(port, '127.0.0.1');
  let first = true;
  const wire = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, done) {
      if (!first) return void tcp.write(chunk, done);
      first = false;
      const half = chunk.length >> 1;
      tcp.write(chunk.subarray(0, half));
      void gap().then(() => tcp.write(chunk.subarray(half), done));
    },
    final(done) {
      tcp.end(done);
    },
  });
  tcp.on('data', (chunk: Buffer) => wire.push(chunk));
  tcp.on('end', () => wire.push(null));
  tcp.on('error', (error) => wire.destroy(error));
  return wire;
}

/** Opens a TLS connection for HOST over `socket` (or a plain TCP one) and returns the echo of one message. */
async function echo(socket?: Duplex): Promise<string> {
  const client = connectTls({
    ...(socket ? { socket } : { host: '127.0.0.1', port }),
    servername: HOST,
    ca: readFileSync(cert.caFile),
  });
  try {
    await new Promise<void>((resolve, reject) => {
      client.once('secureConnect', resolve);
      client.once('error', reject);
    });
    client.write('hello');
    return await new Promise<string>((resolve) => client.once('data', (chunk: Buffer) => resolve(chunk.toString())));
  } finally {
    client.destroy();
  }
}

it('reads the ClientHello into the shared read buffer, not with paused-mode reads', async () => {
  expect(await echo()).toBe('echo hello');
  const events = listenedFor.get(accepted.at(-1)!)!;
  expect(events).toContain('error');
  expect(events).not.toContain('readable');
  expect(events).not.toContain('data');
});

it('serves a ClientHello that arrives in parts while other connections read into the shared buffer', async () => {
  const gap = async () => {
    // Two other handshakes run to their end between the parts: their reads reuse the shared buffer.
    expect(await echo()).toBe('echo hello');
    expect(await echo()).toBe('echo hello');
  };
  expect(await echo(splitWire(gap))).toBe('echo hello');
});
