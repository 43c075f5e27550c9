import { fork } from 'node:child_process';
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
