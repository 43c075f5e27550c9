import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { makeCertificate } from '../tls/helpers.ts';
import { createLoadBalancer, createPool, createZone, trafficPort } from './traffic-helpers.ts';

/**
 * Client connections read into one buffer shared by all of them (raw/client-socket.ts): bytes a connection
 * keeps past a read (a partial head, pipelined requests, a body queued for a slow origin, the unread bytes
 * of a hand-off) must be copies, or the next read of any connection overwrites them. Each test keeps such
 * bytes while other connections read different ones, on real loopback sockets: over plain HTTP, and over
 * HTTPS on the traffic TLS port, whose TLS sockets deliver their plaintext into the same buffer.
 */

/**
 * An origin that answers each request with its path, the sha256 of its body and the body's length. It
 * reads nothing of an /upload body until `release()`.
 */
async function startOrigin(): Promise<{ server: Server; port: number; release: () => void }> {
  let held: (() => void) | undefined;
  const server = createServer((socket) => {
    socket.on('error', () => socket.destroy());
    let buffer = Buffer.alloc(0);
    let pending: { path: string; length: number; hash: ReturnType<typeof createHash>; seen: number } | undefined;
    const answer = (path: string, digest: string, length: number) => {
      const body = `${path} ${digest} ${length}`;
      const send = () => socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
      // /slow answers late, so what is pipelined behind it waits in the proxy.
      if (path.startsWith('/slow')) setTimeout(send, 100);
      else send();
    };
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (pending) {
          const take = Math.min(buffer.length, pending.length - pending.seen);
          pending.hash.update(buffer.subarray(0, take));
          pending.seen += take;
          buffer = buffer.subarray(take);
          if (pending.seen < pending.length) return;
          answer(pending.path, pending.hash.digest('hex'), pending.length);
          pending = undefined;
        }
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffer.subarray(0, end).toString('latin1');
        buffer = buffer.subarray(end + 4);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        const path = head.split(' ')[1]!;
        pending = { path, length, hash: createHash('sha256'), seen: 0 };
        if (path === '/upload') {
          // A slow reader: the proxy's writes of this body queue up behind a full socket buffer.
          socket.pause();
          held = () => {
            socket.resume();
            onData(Buffer.alloc(0));
          };
          return;
        }
      }
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, release: () => held?.() };
}

/** How the raw clients reach the traffic port: plain, or TLS with SNI for the load balancer's host. */
type Transport = { port: number; tls?: { servername: string; ca: string } };

/** A raw client: writes each piece when told, collects what comes back. */
function client(transport: Transport): {
  socket: Socket;
  text: () => string;
  until: (part: string) => Promise<string>;
} {
  const { port, tls } = transport;
  const socket = tls ? connectTls({ port, host: '127.0.0.1', ...tls }) : connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  let text = '';
  const waiters: (() => void)[] = [];
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    for (const waiter of waiters.splice(0)) waiter();
  });
  socket.on('error', () => {});
  const until = (part: string) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no ${JSON.stringify(part)}; got ${JSON.stringify(text)}`)),
        10_000,
      );
      const check = () => {
        if (text.includes(part)) {
          clearTimeout(timer);
          resolve(text);
        } else waiters.push(check);
      };
      check();
    });
  return { socket, text: () => text, until };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe.each(['http', 'https'])('load balancer traffic over %s: client reads share one buffer', (scheme) => {
  let ledge: TestLedge;
  let transport: Transport;
  let origin: Awaited<ReturnType<typeof startOrigin>>;
  const host = 'www.shared-read.test';

  beforeAll(async () => {
    ledge = await startLedge();
    origin = await startOrigin();
    const zone = await createZone(ledge, 'shared-read.test');
    if (scheme === 'http') transport = { port: trafficPort(ledge) };
    else {
      const cert = makeCertificate([host]);
      const uploaded = await fetch(`${ledge.apiUrl}/zones/${zone}/custom_certificates`, {
        method: 'POST',
        headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
        body: JSON.stringify({ certificate: cert.certificate, private_key: cert.privateKey }),
      });
      expect(uploaded.status).toBe(200);
      const tlsPort = ledge.server.platform.traffic.tlsPort!;
      transport = { port: tlsPort, tls: { servername: host, ca: readFileSync(cert.caFile, 'utf8') } };
    }
    const pool = await createPool(ledge, 'shared', [{ name: 'o', address: '127.0.0.1', port: origin.port }]);
    await createLoadBalancer(ledge, zone, { name: host, default_pools: [pool], fallback_pool: pool });
  });
  afterAll(async () => {
    await ledge.close();
    origin.server.close();
  });

  it('a partial head kept across reads survives other connections reading meanwhile', async () => {
    const first = client(transport);
    first.socket.write(`GET /first-path HTTP/1.1\r\nhost: ${host}\r\nx-fill: `);
    // Real time: the partial head reaches the proxy (a read of its own) before the others connect.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const others = Array.from({ length: 4 }, (_, i) => {
      const other = client(transport);
      other.socket.write(
        `GET /other-${i}-${'z'.repeat(200)} HTTP/1.1\r\nhost: ${host}\r\nx-fill: ${'y'.repeat(300)}\r\n\r\n`,
      );
      return other.until(`/other-${i}`).finally(() => other.socket.destroy());
    });
    await Promise.all(others);
    first.socket.write('still-first\r\n\r\n');
    const text = await first.until(' 0');
    expect(text).toMatch(/\r\n\r\n\/first-path [0-9a-f]{64} 0$/);
    first.socket.destroy();
  });

  it('pipelined requests waiting behind a slow answer survive other connections reading meanwhile', async () => {
    const piped = client(transport);
    piped.socket.write(
      `GET /slow HTTP/1.1\r\nhost: ${host}\r\n\r\nGET /second-in-line HTTP/1.1\r\nhost: ${host}\r\n\r\n` +
        `GET /third-in-line HTTP/1.1\r\nhost: ${host}\r\n\r\n`,
    );
    // Real time: the pipelined requests reach the proxy before the other connection does.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const other = client(transport);
    other.socket.write(`GET /${'q'.repeat(120)} HTTP/1.1\r\nhost: ${host}\r\nx-fill: ${'w'.repeat(500)}\r\n\r\n`);
    await other.until('qqq');
    other.socket.destroy();
    const text = await piped.until('/third-in-line');
    expect(text.indexOf('/slow ')).toBeLessThan(text.indexOf('/second-in-line '));
    expect(text.indexOf('/second-in-line ')).toBeLessThan(text.indexOf('/third-in-line '));
    piped.socket.destroy();
  });

  it('a large request body queued for a slow origin arrives intact while other connections read', async () => {
    // The origin reads nothing of this body until the other connections were served: the proxy's writes of
    // it queue behind a full socket buffer meanwhile (8 MiB is more than the kernel buffers of a socket that
    // is not read).
    const body = Buffer.alloc(8 * 1024 * 1024);
    for (let i = 0; i < body.length; i += 4) body.writeUInt32LE((i * 2654435761) >>> 0, i);
    const upload = client(transport);
    upload.socket.write(`PUT /upload HTTP/1.1\r\nhost: ${host}\r\ncontent-length: ${body.length}\r\n\r\n`);
    upload.socket.write(body);
    // Meanwhile the proxy has filled the origin connection's buffers and holds a queued write. Real time:
    // kernel socket buffers filling, with nothing to poll.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const others = Array.from({ length: 20 }, async (_, i) => {
      const other = client(transport);
      // Bodies that fill whole reads: every byte of the shared buffer is overwritten.
      const noise = 256 * 1024;
      other.socket.write(`PUT /noise-${i} HTTP/1.1\r\nhost: ${host}\r\ncontent-length: ${noise}\r\n\r\n`);
      other.socket.write(Buffer.alloc(noise, 'n'));
      await other.until(`/noise-${i}`);
      other.socket.destroy();
    });
    await Promise.all(others);
    origin.release();
    const text = await upload.until(` ${body.length}`);
    expect(text).toContain(`/upload ${sha256(body)} ${body.length}`);
    upload.socket.destroy();
  });

  it('an HTTP/1.0 request handed to node:http keeps the body bytes read with its head', async () => {
    const old = client(transport);
    old.socket.write(`PUT /handed-off HTTP/1.0\r\nhost: ${host}\r\ncontent-length: 11\r\n\r\nhello world`);
    const text = await old.until(' 11');
    expect(text).toContain(`/handed-off ${sha256(Buffer.from('hello world'))} 11`);
    old.socket.destroy();
  });
});
