import { Socket } from 'node:net';
import { SharedReadBuffer } from './shared-read-buffer.ts';

/**
 * Client reads land in one buffer shared by every client connection of the process (see SharedReadBuffer).
 * 64 KiB: what Node reads at most per read from a plain socket.
 */
const CLIENT_READ_BYTES = 64 * 1024;
const clientReads = new SharedReadBuffer(CLIENT_READ_BYTES);
const shared = clientReads.bytes;

/** Bytes of the shared read buffer are only valid until the read callback returns. */
export function isBorrowed(chunk: Buffer): boolean {
  return clientReads.holds(chunk);
}

/** `chunk`, copied when it lies in the shared read buffer (to keep it past the read callback). */
export function owned(chunk: Buffer): Buffer {
  return clientReads.owned(chunk);
}

/** Bytes read from a client; false stops reading until the socket is resumed. */
export type ClientRead = (chunk: Buffer) => boolean;

interface HandleCarrier {
  _handle?: { useUserBuffer?: unknown } | null;
}

interface OnreadSymbols {
  buffer: symbol;
  callback: symbol;
  generator: symbol;
}
let onreadSymbols: OnreadSymbols | null | undefined;

/**
 * The keys under which a net.Socket keeps its `onread` option (Node's own symbols, not exported): read off
 * a socket created with the option. null when this Node keeps them otherwise.
 */
function findOnreadSymbols(): OnreadSymbols | null {
  const probe = new Socket({ onread: { buffer: Buffer.alloc(1), callback: () => true } });
  const named = (name: string) => Object.getOwnPropertySymbols(probe).find((key) => key.description === name);
  const [buffer, callback, generator] = [named('kBuffer'), named('kBufferCb'), named('kBufferGen')];
  return buffer && callback && generator ? { buffer, callback, generator } : null;
}

/**
 * Makes a socket deliver what it reads as an `onread` socket does: into the shared buffer, to `read`, with
 * no Buffer, Readable push or 'data' event per read. Node offers `onread` only to sockets it connects
 * itself; an accepted socket, or a server-side TLS socket, gets the same two settings by hand: its handle
 * (a StreamBase: the TCP handle, or the TLS handle of a TLS socket) is given the user buffer, and the
 * socket the keys under which Node's read callback looks for it. Pause and resume then stop and start the
 * handle's reads, as on the plain path. Must be called before anything is read: on a TLS socket in
 * 'secureConnection' (which node:tls emits before the first application data of the connection), on an
 * accepted socket before it is resumed (`pauseOnConnect`). False (nothing changed) when this Node has no
 * such handle or keys, or when bytes were already queued: the caller then reads 'data' events.
 */
export function readIntoSharedBuffer(socket: Socket, read: ClientRead): boolean {
  if (onreadSymbols === undefined) onreadSymbols = findOnreadSymbols();
  const symbols = onreadSymbols;
  const handle = (socket as unknown as HandleCarrier)._handle;
  if (!symbols || !handle || typeof handle.useUserBuffer !== 'function' || socket.readableLength > 0) return false;
  const fields = socket as unknown as Record<symbol, unknown>;
  // Node sets the three on every socket (null when unused): anything else is a layout this does not know.
  if (fields[symbols.buffer] !== null || fields[symbols.callback] !== null || fields[symbols.generator] !== null) {
    return false;
  }
  (handle.useUserBuffer as (buffer: Buffer) => void).call(handle, shared);
  fields[symbols.buffer] = shared;
  fields[symbols.generator] = null;
  fields[symbols.callback] = (bytes: number, buffer: Buffer) => read(buffer.subarray(0, bytes));
  return true;
}

/**
 * Stops the shared-buffer reads of `readIntoSharedBuffer` on a socket: one about to be wrapped (node:tls takes
 * over its handle's reads), which is then a plain socket again for Node, so bytes put back with `unshift` are
 * read as from any socket; or one that closed, which so lets go of its read callback and what that holds.
 * Nothing to do on a socket that never read so.
 */
export function stopReadingIntoSharedBuffer(socket: Socket): void {
  const symbols = onreadSymbols;
  if (!symbols) return;
  socket.pause();
  const fields = socket as unknown as Record<symbol, unknown>;
  fields[symbols.buffer] = null;
  fields[symbols.callback] = null;
}
