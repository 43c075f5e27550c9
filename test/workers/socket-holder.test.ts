import { fork } from 'node:child_process';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openListeningSockets } from '../../src/workerd/listen-socket.ts';

const HOLDER = join(import.meta.dirname, '../../src/workerd/socket-holder.mjs');

describe('socket holder', () => {
  // CI, failure-domains-load: a deploy failed with 500 "socket holder exited (0) before handing over the
  // sockets". The holder exited as soon as its last send completed, and a busy parent could see the exit
  // before the last message. It now stays until the parent, holding every socket, disconnects.
  it('stays until the parent has taken every socket and disconnects (socket holder exited (0) before handing over the sockets)', async () => {
    const holder = fork(HOLDER, ['0', '127.0.0.1', '2'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    let exitedAt: number | undefined;
    const exited = new Promise<number | null>((resolve) =>
      holder.once('exit', (code) => {
        exitedAt = Date.now();
        resolve(code);
      }),
    );
    const handles: { close(): void }[] = [];
    await new Promise<void>((resolve) =>
      holder.on('message', (_message, handle) => {
        handles.push(handle as { close(): void });
        if (handles.length === 2) resolve();
      }),
    );
    const tookAll = Date.now();
    // The holder's sends are complete; before the fix it had exited by now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(exitedAt).toBeUndefined();
    holder.disconnect();
    expect(await exited).toBe(0);
    expect(exitedAt! - tookAll).toBeGreaterThanOrEqual(300);
    for (const handle of handles) handle.close();
  });

  it('hands over sockets that workerd could accept on, all on one port', async () => {
    const sockets = await openListeningSockets('127.0.0.1', 0, 2);
    try {
      expect(sockets).toHaveLength(2);
      expect(sockets[0]!.port).toBeGreaterThan(0);
      expect(sockets[1]!.port).toBe(sockets[0]!.port);
      // Listening: the kernel completes a connection into the backlog though nobody accepts it yet.
      const connected = await new Promise<boolean>((resolve) => {
        const client = createConnection(sockets[0]!.port, '127.0.0.1');
        client.once('connect', () => {
          client.destroy();
          resolve(true);
        });
        client.once('error', () => resolve(false));
      });
      expect(connected).toBe(true);
    } finally {
      for (const socket of sockets) socket.handle.close();
    }
  });
});
