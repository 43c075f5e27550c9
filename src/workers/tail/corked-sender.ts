import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';

/**
 * How long a session's socket gathers frames before they leave together. workerd writes an event's end
 * line along with the next request's start line, so at load the events reach the server a few at a time
 * over many reads; a few milliseconds' wait is invisible to someone reading a tail.
 */
const GATHER_MS = 5;

/**
 * Sends tail events on one session's WebSocket, one event per frame (wrangler JSON.parses each message as
 * one event, so frames cannot carry several). The socket stays corked for GATHER_MS after the first
 * event, so the events of that time leave in one writev, one train of TCP segments and one wake-up of the
 * client, instead of a syscall and a loopback delivery per event, which were most of the server's
 * per-event cost.
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
      setTimeout(uncork, GATHER_MS);
    }
    // A text frame: the bytes are the event's JSON as workerd wrote it, encoded once for every session.
    ws.send(frame, { binary: false });
  };
}
