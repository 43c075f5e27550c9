import type { IncomingMessage, ServerResponse } from 'node:http';

/** How long a connection whose body was refused is still read (and discarded) after the answer. */
const LINGER_MS = 2_000;

/**
 * A body refused early (413, `connection: close`) is still streaming in when the answer goes out. Closed
 * at once, the socket has unread bytes, so the kernel resets the connection, and a client still writing
 * gets EPIPE or ECONNRESET instead of reading the answer. As nginx's lingering close does, the answer is
 * followed by a FIN while what the client still sends is read and discarded (node:http dumps the rest of
 * the body) until it closes or LINGER_MS pass. node:http closes such a socket with `destroySoon()` once the
 * response finishes: this socket's own is replaced before that. Call it on the response's 'prefinish'
 * (headers written with writeHead() show their `connection: close` only then).
 */
export function lingerIfRefused(incoming: IncomingMessage, outgoing: ServerResponse): void {
  if (incoming.complete || outgoing.shouldKeepAlive) return;
  const socket = incoming.socket;
  socket.destroySoon = () => {
    socket.end();
    const deadline = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once('close', () => clearTimeout(deadline));
  };
}
