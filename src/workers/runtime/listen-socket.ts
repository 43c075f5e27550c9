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
 * Every generation listens on its own SO_REUSEPORT socket of the same port. This attaches, once, a
 * reuseport program to the group that sends each new connection to the group's second socket: during
 * a swap that is the new generation's (the old one, first, then only finishes what it already
 * accepted); otherwise there is one socket and the kernel falls back to it. So a retiring generation
 * is never handed a connection it would close unread on SIGTERM. Node has no setsockopt: a python3
 * one-liner applies SO_ATTACH_REUSEPORT_CBPF to the inherited fd. Returns false without python3.
 */
export async function steerToNewestSocket(socket: ListeningSocket): Promise<boolean> {
  const script = [
    'import ctypes, socket',
    'class F(ctypes.Structure): _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]',
    'class P(ctypes.Structure): _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(F))]',
    'code = (F * 1)(F(0x06, 0, 0, 1))  # BPF_RET | BPF_K: socket index 1',
    'prog = P(1, code)',
    's = socket.socket(fileno=3)',
    's.setsockopt(socket.SOL_SOCKET, 51, ctypes.string_at(ctypes.addressof(prog), ctypes.sizeof(prog)))  # SO_ATTACH_REUSEPORT_CBPF',
    's.detach()',
  ].join('\n');
  return new Promise((resolve) => {
    const child = spawn('python3', ['-c', script], { stdio: ['ignore', 'ignore', 'ignore', socket.handle as never] });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}
