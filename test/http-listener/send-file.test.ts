import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileSender } from '../../src/shared/http-listener/send-file.ts';
import { ClientGone } from '../../src/shared/http-listener/send-stream.ts';
import { tempDir } from '../helpers/ledge.ts';

/** A real HTTP server on 127.0.0.1 whose handler sends `span` of `path` with `sender`. */
async function serveFile(sender: FileSender, path: string, span: { offset: number; length: number }) {
  const outcome: { handles: FileHandle[]; results: Promise<unknown>[] } = { handles: [], results: [] };
  const server = createServer((_req, res) => {
    res.setHeader('content-length', span.length);
    const sent = open(path, 'r').then((handle) => {
      outcome.handles.push(handle);
      return sender.send({ handle, ...span }, res);
    });
    // As R2WireBackend does: a failure after the headers went out cuts the connection.
    outcome.results.push(
      sent.then(
        () => 'sent',
        (error: unknown) => {
          res.destroy();
          return error;
        },
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, outcome };
}

function fetchBytes(url: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', reject);
    }).on('error', reject);
  });
}

describe('FileSender', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it('sends exactly the span, across several reads into one reused buffer, and closes the file', async () => {
    const bytes = randomBytes(2 * 1024 * 1024 + 123);
    const path = join(tempDir('ledge-send-file-'), 'blob');
    writeFileSync(path, bytes);
    const sender = new FileSender();
    const span = { offset: 1000, length: bytes.length - 1000 - 7 };
    const served = await serveFile(sender, path, span);
    server = served.server;
    for (let i = 0; i < 3; i++) {
      const got = await fetchBytes(served.url);
      expect(got.equals(bytes.subarray(span.offset, span.offset + span.length))).toBe(true);
    }
    expect(await Promise.all(served.outcome.results)).toEqual(['sent', 'sent', 'sent']);
    expect(sender.started).toBe(3);
    // A closed FileHandle reports fd -1.
    expect(served.outcome.handles.map((h) => h.fd)).toEqual([-1, -1, -1]);
  });

  it('rejects with ClientGone when the client hangs up mid-body, and still closes the file', async () => {
    const bytes = randomBytes(8 * 1024 * 1024);
    const path = join(tempDir('ledge-send-file-'), 'blob');
    writeFileSync(path, bytes);
    const sender = new FileSender();
    const served = await serveFile(sender, path, { offset: 0, length: bytes.length });
    server = served.server;
    await new Promise<void>((resolve) => {
      const req = get(served.url, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
    });
    const [result] = await Promise.all(served.outcome.results);
    expect(result).toBeInstanceOf(ClientGone);
    expect(served.outcome.handles[0]!.fd).toBe(-1);
    // The sender keeps working for the next client.
    expect((await fetchBytes(served.url)).equals(bytes)).toBe(true);
  });

  it('fails (no short body passed off as whole) when the file is shorter than the span', async () => {
    const path = join(tempDir('ledge-send-file-'), 'blob');
    writeFileSync(path, randomBytes(100_000));
    const served = await serveFile(new FileSender(), path, { offset: 0, length: 200_000 });
    server = served.server;
    await fetchBytes(served.url).catch(() => undefined);
    const [result] = await Promise.all(served.outcome.results);
    expect(String(result)).toMatch(/ended 100000 bytes before/);
    expect(served.outcome.handles[0]!.fd).toBe(-1);
  });
});
