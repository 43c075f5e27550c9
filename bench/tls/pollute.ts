// Runs a little of everything a Ledge process does besides its data plane through Node's stream and socket
// internals: node:http server and client over TCP and a unix socket, fetch, a child process's pipes, a TLS
// client, file streams. Node's own functions (onStreamRead, writeOrBuffer, ...) then have seen many kinds of
// socket, as they have in Ledge's process, and their inline caches are no longer specialised to the data
// plane's two. `data-plane-proxy.ts` calls it when LEDGE_BENCH_DATA_PLANE is `polluted` or `worker`.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { createGzip } from 'node:zlib';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export async function polluteNodeInternals(rounds = 200): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ledge-pollute-'));
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('x'.repeat(100)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const unix = createServer((req, res) => {
    req.resume();
    res.end('pong');
  });
  const socketPath = join(dir, 'ping.sock');
  await new Promise<void>((resolve) => unix.listen(socketPath, resolve));
  const port = (server.address() as { port: number }).port;
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const unixAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const get = (options: Record<string, unknown>) =>
    new Promise<void>((resolve, reject) => {
      const req = request(options, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end('body');
    });
  for (let i = 0; i < rounds; i++) {
    await get({ host: '127.0.0.1', port, path: '/', method: 'POST', agent });
    await get({ socketPath, path: '/', agent: unixAgent });
    await (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x' })).text();
  }
  const child = spawn('cat', { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdout.resume();
  for (let i = 0; i < rounds; i++) child.stdin.write(`line ${i}\n`);
  child.stdin.end();
  await new Promise((resolve) => child.once('close', resolve));
  // A TLS client whose handshake fails: another kind of TLS socket through the same internals.
  await new Promise<void>((resolve) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false });
    socket.on('error', () => resolve());
    socket.on('close', () => resolve());
  });
  const file = createWriteStream('/dev/null');
  for (let i = 0; i < rounds; i++) file.write(`log line ${i}\n`);
  await new Promise((resolve) => file.end(resolve));
  await pipeline(Readable.from(['a'.repeat(1000), 'b'.repeat(1000)]), createGzip(), new PassThrough().resume());
  agent.destroy();
  unixAgent.destroy();
  await new Promise((resolve) => server.close(resolve));
  await new Promise((resolve) => unix.close(resolve));
  rmSync(dir, { recursive: true, force: true });
}
