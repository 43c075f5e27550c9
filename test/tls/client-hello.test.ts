import { createServer } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { expect, it } from 'vitest';
import { readClientHello } from '../../src/proxy/tls/client-hello.ts';

/** The first flight a real node:tls client sends (captured by a plain TCP server that never answers). */
async function capturedHello(options: { servername?: string; ALPNProtocols?: string[] }): Promise<Buffer> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  try {
    const received = new Promise<Buffer>((resolve) => {
      server.once('connection', (socket) => {
        let bytes = Buffer.alloc(0);
        socket.on('data', (chunk: Buffer) => {
          bytes = Buffer.concat([bytes, chunk]);
          const hello = readClientHello(bytes);
          if (hello !== undefined) {
            resolve(bytes);
            socket.destroy();
          }
        });
      });
    });
    const client = tlsConnect({ host: '127.0.0.1', port, ...options });
    client.on('error', () => {});
    const bytes = await received;
    client.destroy();
    return bytes;
  } finally {
    server.close();
  }
}

it('reads the name and ALPN list of a ClientHello, whole or split across reads and records', async () => {
  const bytes = await capturedHello({ servername: 'Shop.Example.test', ALPNProtocols: ['h2', 'http/1.1'] });
  expect(readClientHello(bytes)).toEqual({ serverName: 'shop.example.test', protocols: ['h2', 'http/1.1'] });
  // Any prefix: more bytes are needed.
  for (const cut of [0, 3, 5, 9, bytes.length - 1]) expect(readClientHello(bytes.subarray(0, cut))).toBeUndefined();
  // The same handshake message split over two records (as a client may frame it).
  const body = bytes.subarray(5, 5 + bytes.readUInt16BE(3));
  const half = Math.floor(body.length / 2);
  const record = (part: Buffer) => Buffer.concat([Buffer.from([22, 3, 1, part.length >> 8, part.length & 255]), part]);
  const split = Buffer.concat([record(body.subarray(0, half)), record(body.subarray(half))]);
  expect(readClientHello(split)).toEqual({ serverName: 'shop.example.test', protocols: ['h2', 'http/1.1'] });
  expect(readClientHello(split.subarray(0, split.length - 1))).toBeUndefined();
});

it('reads a ClientHello without SNI or ALPN, and refuses what is not one', async () => {
  const bytes = await capturedHello({});
  expect(readClientHello(bytes)).toEqual({ serverName: undefined, protocols: [] });
  expect(readClientHello(Buffer.from('GET / HTTP/1.1\r\n\r\n'))).toBeInstanceOf(Error);
  // A record that is a handshake but whose message is not a ClientHello.
  const notHello = Buffer.from(bytes);
  notHello[5] = 2;
  expect(readClientHello(notHello)).toBeInstanceOf(Error);
  // An extension list that claims more bytes than the message holds.
  const truncated = Buffer.from(bytes);
  const body = truncated.subarray(9);
  let offset = 2 + 32;
  offset += 1 + body[offset]!;
  offset += 2 + body.readUInt16BE(offset);
  offset += 1 + body[offset]!;
  body.writeUInt16BE(body.readUInt16BE(offset) + 1, offset);
  expect(readClientHello(truncated)).toBeInstanceOf(Error);
});
