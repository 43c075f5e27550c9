import { Socket } from 'node:net';

/**
 * Client reads land in one buffer shared by every client connection of the process. A read callback runs
 * to its end before libuv reads another socket, so the buffer is free again after each callback; whatever
 * a connection keeps past its callback (a partial head, pipelined bytes, a body chunk queued for the
 * origin) is copied out first (`owned`). 64 KiB: what Node reads at most per read from a plain socket.
 */
const CLIENT_READ_BYTES = 64 * 1024;
const shared = Buffer.allocUnsafe(CLIENT_READ_BYTES);

/** Bytes of the shared read buffer are only valid until the read callback returns. */
export function isBorrowed(chunk: Buffer): boolean {
  return chunk.buffer === shared.buffer;
}

/** `chunk`, copied when it lies in the shared read buffer (to keep it past the read callback). */
export function owned(chunk: Buffer): Buffer {
  return chunk.buffer === shared.buffer ? Buffer.from(chunk) : chunk;
}

/** Bytes read from a client; false stops reading until the socket is resumed. */
export type ClientRead = (chunk: Buffer) => boolean;

interface HandleCarrier {
  _handle?: { readStart?: unknown; useUserBuffer?: unknown } | null;
}

/**
 * Re-wraps an accepted client socket (the server's `pauseOnConnect`: it has not read yet) in a socket
 * that reads with `onread` into the shared buffer. Node offers `onread` only for sockets it connects, so
 * the accepted socket's TCP handle is given to a new Socket (`handle`, Node's own way of wrapping an
 * accepted handle); that skips, per read, a new 64 KiB allocation, a Buffer, the Readable's push and the
 * 'data' event (~14% of the CPU per proxied 1 KiB request in a same-run A/B, docs/benchmarks-history.md, 2026-11-24).
 * The new socket is still a plain net.Socket for everything else: writes, pause/resume (which stop and
 * start its reads), 'end', 'close', and the hand-off to node:http (ClientConnection then pushes copies of
 * its reads into the socket, so node:http and the WebSocket pipe get 'data' events as from any socket).
 * The accepted socket stays as the server's count of the connection and is destroyed when the new one
 * closes (`server.close()` waits for it). Returns undefined when this Node has no such handle (the caller
 * then reads the accepted socket with 'data' events, as before).
 */
export function adoptClientSocket(accepted: Socket, read: ClientRead): Socket | undefined {
  const carrier = accepted as unknown as HandleCarrier;
  const handle = carrier._handle;
  if (!handle || typeof handle.readStart !== 'function' || typeof handle.useUserBuffer !== 'function') return;
  carrier._handle = null;
  // `handle` is typed as a BoundSocket, its public use; an accepted TCP handle is what Node passes itself.
  const options: unknown = {
    handle,
    allowHalfOpen: true,
    onread: {
      buffer: shared,
      callback: (bytes: number, buffer: Uint8Array) => read((buffer as Buffer).subarray(0, bytes)),
    },
  };
  const socket = new Socket(options as ConstructorParameters<typeof Socket>[0]);
  socket.once('close', () => accepted.destroy());
  return socket;
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
 * Stops the shared-buffer reads of `readIntoSharedBuffer` on a socket that is about to be wrapped (node:tls
 * takes over its handle's reads): its reads stop and it is a plain socket again for Node, so bytes put back
 * with `unshift` are read as from any socket.
 */
export function stopReadingIntoSharedBuffer(socket: Socket): void {
  socket.pause();
  const symbols = onreadSymbols!;
  const fields = socket as unknown as Record<symbol, unknown>;
  fields[symbols.buffer] = null;
  fields[symbols.callback] = null;
}
