import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import type { Clock } from '../../shared/clock.ts';

/**
 * How long a session gathers events before they leave together: at 4,000 traced requests a second, 80 events per
 * write and 50 wake-ups of the client a second (at 5 ms the server's CPU per traced request was ~3 µs higher,
 * docs/benchmarks-history.md, tail cost of 2026-11-25). Events already wait up to 10 ms in the isolate and 5 ms in
 * the pipe (isolate/trace.ts, gulped-output.ts); 20 ms more is still invisible to someone reading a tail.
 */
const GATHER_MS = 20;

/**
 * Sends tail events on one session's WebSocket, one event per frame (wrangler JSON.parses each message as
 * one event, so frames cannot carry several). The frames of GATHER_MS leave in one write: one syscall, one
 * train of TCP segments and one wake-up of the client instead of one per event, which were most of the
 * server's per-event cost. They are framed here (RFC 6455: FIN and text opcode, the payload length, no
 * mask from a server) rather than by `ws.send`, whose per-frame work (a header buffer and two stream
 * writes) was the next largest part; the session's WebSocket has no extension (the server offers no
 * permessage-deflate), so its frames are exactly these bytes, and ws's own writes (pings, the close
 * frame) go to the same socket whole, between ours. The gathering wait runs on `clock` (a test moves it).
 */
export function gatheringSender(ws: WebSocket, socket: Socket, clock: Clock): (payload: Buffer) => void {
  let gathered: Buffer[] = [];
  const send = () => {
    const frames = gathered;
    gathered = [];
    if (ws.readyState === ws.OPEN && !socket.destroyed) socket.write(Buffer.concat(frames));
  };
  return (payload) => {
    if (gathered.length === 0) clock.schedule(GATHER_MS, send);
    gathered.push(frameHeader(payload.length), payload);
  };
}

/** The header of an unmasked final text frame carrying `length` bytes. */
function frameHeader(length: number): Buffer {
  if (length < 126) return Buffer.from([0x81, length]);
  if (length < 65_536) return Buffer.from([0x81, 126, length >> 8, length & 0xff]);
  const header = Buffer.alloc(10);
  header[0] = 0x81;
  header[1] = 127;
  header.writeBigUInt64BE(BigInt(length), 2);
  return header;
}
