import { fork, spawn } from 'node:child_process';
import { join } from 'node:path';

/** A listening TCP socket owned by this process but never accepted on here (see socket-holder.ts). */
export interface ListeningSocket {
  port: number;
  /** The libuv handle: passed as a stdio entry so each workerd generation inherits the fd. */
  handle: { fd: number; close(): void };
}

export async function openListeningSocket(host: string, port: number): Promise<ListeningSocket> {
  const child = fork(join(import.meta.dirname, 'socket-holder.ts'), [String(port), host], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`socket holder exited (${code}) before handing over the socket`)));
    child.once('message', (message: { port?: number; error?: string }, handle: unknown) => {
      if (message.error || !handle) {
        reject(new Error(`cannot listen on ${host}:${port} for functions: ${message.error ?? 'no handle'}`));
        return;
      }
      resolve({ port: message.port!, handle: handle as ListeningSocket['handle'] });
    });
  });
}

/**
 * Sets TCP_DEFER_ACCEPT on the socket: the kernel hands a connection to accept() only once its first
 * bytes (the request) have arrived. A retiring workerd generation closes connections it accepted that
 * have no request yet; with this option it never holds such a connection, so a swap drops none.
 * Node has no setsockopt, so a one-line python3 applies it to the inherited fd (socket options belong
 * to the socket, not the descriptor). Returns false when python3 is not available.
 */
export async function deferAccept(socket: ListeningSocket, seconds = 5): Promise<boolean> {
  const script = `import socket; s = socket.socket(fileno=3); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, ${seconds}); s.detach()`;
  return new Promise((resolve) => {
    const child = spawn('python3', ['-c', script], { stdio: ['ignore', 'ignore', 'ignore', socket.handle as never] });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}
