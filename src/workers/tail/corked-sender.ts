import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';

/**
 * Sends tail events on one session's WebSocket, one event per frame (wrangler JSON.parses each message as
 * one event, so frames cannot carry several). Events come in bursts: workerd writes end lines in batches
 * and the server reads them in one go. The socket stays corked until the burst's tick ends, so a burst
 * leaves in one writev, one train of TCP segments and one wake-up of the client, instead of a syscall and
 * a loopback delivery per event, which were most of the server's per-event cost.
 */
export function corkedSender(ws: WebSocket, socket: Socket): (frame: Buffer) => void {
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  return (frame) => {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    // A text frame: the bytes are the event's JSON as workerd wrote it, encoded once for every session.
    ws.send(frame, { binary: false });
  };
}
