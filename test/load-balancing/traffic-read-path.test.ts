import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { expect, it } from 'vitest';
import { isBorrowed, readIntoSharedBuffer } from '../../src/proxy/raw/client-socket.ts';

/**
 * The traffic listeners read every accepted client socket into the shared read buffer (Node's `onread` path
 * set up by hand). On a Node whose sockets are laid out otherwise the listeners silently fall back to
 * 'data' events, which cost more per read: this fails instead.
 */
it('reads an accepted socket into the shared read buffer on this Node', async () => {
  const reads: { borrowed: boolean; text: string }[] = [];
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  let accepted: Socket | undefined;
  let taken = false;
  const server = createServer({ pauseOnConnect: true }, (socket) => {
    accepted = socket;
    taken = readIntoSharedBuffer(socket, (chunk) => {
      reads.push({ borrowed: isBorrowed(chunk), text: chunk.toString() });
      if (reads.map((read) => read.text).join('') === 'ping') done();
      return true;
    });
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1', () => client.write('ping'));
  try {
    await finished;
    expect(taken).toBe(true);
    expect(reads.every((read) => read.borrowed)).toBe(true);
    // No 'data' event: nothing was pushed into the socket's Readable.
    expect(accepted!.readableLength).toBe(0);
  } finally {
    client.destroy();
    accepted?.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});
