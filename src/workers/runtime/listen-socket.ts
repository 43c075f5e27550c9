import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** A listening TCP socket owned by this process but never accepted on here (see socket-holder.mjs). */
export interface ListeningSocket {
  port: number;
  /** The libuv handle: passed as a stdio entry so each workerd generation inherits the fd. */
  handle: { fd: number; close(): void };
}

/**
 * Opens a listening socket for a workerd generation through a short-lived Node child
 * (socket-holder.mjs), so this process never polls it.
 */
export async function openListeningSocket(host: string, port: number): Promise<ListeningSocket> {
  const holder = fork(join(import.meta.dirname, 'socket-holder.mjs'), [String(port), host], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return receiveSocket(holder, host, port);
}

function receiveSocket(child: ChildProcess, host: string, port: number): Promise<ListeningSocket> {
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
 * Every generation listens on its own SO_REUSEPORT socket of the same port. This attaches a reuseport
 * program to the group that sends each new connection to the socket at `index` (in order of joining).
 * A swap first pins connections to the running generation's socket (index 0), so the short-lived
 * holder of the next socket never accepts one; once the holder has handed the socket over, it pins
 * them to the new socket (index 1), where they wait until the new generation accepts, so the retiring
 * generation is never handed a connection it would close unread on SIGTERM. After the old socket closes, index 1 is out of range and the kernel uses the one socket
 * left. Node has no setsockopt: a python3 one-liner applies SO_ATTACH_REUSEPORT_CBPF to the inherited
 * fd. Returns false without python3.
 */
export async function steerConnections(socket: ListeningSocket, index: 0 | 1): Promise<boolean> {
  const script = [
    'import ctypes, socket',
    'class F(ctypes.Structure): _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]',
    'class P(ctypes.Structure): _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(F))]',
    `code = (F * 1)(F(0x06, 0, 0, ${index}))  # BPF_RET | BPF_K: the socket index`,
    'prog = P(1, code)',
    's = socket.socket(fileno=3)',
    's.setsockopt(socket.SOL_SOCKET, 51, ctypes.string_at(ctypes.addressof(prog), ctypes.sizeof(prog)))  # SO_ATTACH_REUSEPORT_CBPF',
    's.detach()',
  ].join('\n');
  return new Promise((resolve) => {
    const child = spawn(pythonBinary(), ['-c', script], {
      stdio: ['ignore', 'ignore', 'ignore', socket.handle as never],
    });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}

/** The system python3 when there is one: version-manager shims on the PATH add ~100 ms per call. */
function pythonBinary(): string {
  return existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
}
