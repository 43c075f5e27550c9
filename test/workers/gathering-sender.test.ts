import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { systemClock, type Clock } from '../../src/shared/clock.ts';
import { gatheringSender } from '../../src/workers/tail/gathering-sender.ts';
import { ManualClock } from '../helpers/manual-clock.ts';

/** A real ws server and client on loopback; the server side sends with gatheringSender (on `clock`, if given). */
async function connected(
  clock?: Clock,
): Promise<{ server: Server; client: WebSocket; socket: Socket; send: (payload: Buffer) => void }> {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const server = createServer();
  const serverSide = new Promise<{ socket: Socket; send: (payload: Buffer) => void }>((resolve) => {
    server.on('upgrade', (request, socket, head) =>
      wss.handleUpgrade(request, socket, head, (ws) =>
        resolve({ socket: socket as Socket, send: gatheringSender(ws, socket as Socket, clock ?? systemClock) }),
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  const { socket, send } = await serverSide;
  await new Promise((resolve) => client.once('open', resolve));
  return { server, client, socket, send };
}

describe('gatheringSender', () => {
  const open: Array<{ server: Server; client: WebSocket }> = [];
  afterEach(async () => {
    for (const { server, client } of open.splice(0)) {
      client.terminate();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('frames every length class so a real client reads each payload as one text message, in order', async () => {
    const pair = await connected();
    open.push(pair);
    // 7-bit, 16-bit and 64-bit payload lengths, and their edges.
    const lengths = [0, 1, 125, 126, 127, 65_535, 65_536, 200_000];
    const payloads = lengths.map((length, i) => Buffer.alloc(length, String.fromCharCode(97 + i)));
    const received: Array<{ text: string; binary: boolean }> = [];
    const all = new Promise<void>((resolve) =>
      pair.client.on('message', (data, binary) => {
        received.push({ text: data.toString(), binary });
        if (received.length === payloads.length) resolve();
      }),
    );
    for (const payload of payloads) pair.send(payload);
    await all;
    expect(received.map((r) => r.binary)).toEqual(lengths.map(() => false));
    expect(received.map((r) => r.text.length)).toEqual(lengths);
    expect(received.map((r) => r.text)).toEqual(payloads.map((p) => p.toString()));
  });

  it('sends nothing once the client has gone, without throwing', async () => {
    const clock = new ManualClock();
    const pair = await connected(clock);
    open.push(pair);
    const closed = once(pair.socket, 'close');
    pair.client.terminate();
    await closed;
    pair.send(Buffer.from('{"late":true}'));
    // The late send's gathered write runs inside advance(); a throw there would fail the test.
    await clock.advance(20);
    expect(clock.pending).toBe(0);
  });
});
