import { fork, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** A listening TCP socket owned by this process but never accepted on here (see socket-holder.mjs). */
export interface ListeningSocket {
  port: number;
  /** The libuv handle: passed as a stdio entry so each workerd generation inherits the fd. */
  handle: { fd: number; close(): void };
}

/**
 * Opens `count` listening sockets on one port (SO_REUSEPORT, joined in order) through a short-lived
 * Node child (socket-holder.mjs), so this process never polls them.
 */
export async function openListeningSockets(host: string, port: number, count: number): Promise<ListeningSocket[]> {
  return holdSockets([String(port), host, String(count)], count, `${host}:${port}`);
}

/**
 * Opens listening unix sockets at `paths` the same way (the accounts' backend processes inherit them,
 * so connections queued while a backend restarts wait for its successor instead of being refused).
 */
export async function openUnixSockets(paths: string[]): Promise<ListeningSocket[]> {
  if (paths.length === 0) return [];
  return holdSockets(['unix', ...paths], paths.length, paths.join(', '));
}

async function holdSockets(args: string[], count: number, what: string): Promise<ListeningSocket[]> {
  const holder = fork(join(import.meta.dirname, 'socket-holder.mjs'), args, {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const sockets: ListeningSocket[] = [];
    holder.once('error', reject);
    holder.once('exit', (code) => {
      for (const socket of sockets) socket.handle.close();
      reject(new Error(`socket holder exited (${code}) before handing over the sockets`));
    });
    holder.on('message', (message: { port?: number; index?: number; error?: string }, handle: unknown) => {
      if (message.error || !handle) {
        for (const socket of sockets) socket.handle.close();
        reject(new Error(`cannot listen on ${what} for functions: ${message.error ?? 'no handle'}`));
        return;
      }
      sockets.push({ port: message.port!, handle: handle as ListeningSocket['handle'] });
      if (sockets.length === count) {
        holder.removeAllListeners('exit');
        // The holder waits for this before it exits (socket-holder.mjs, exitWhenTaken).
        if (holder.connected) holder.disconnect();
        resolve(sockets);
      }
    });
  });
}

/** Which sockets of the port's reuseport group get new connections: indices base..base+count-1. */
export interface SocketRange {
  base: number;
  count: number;
}

/**
 * A generation's workerd processes each listen on their own SO_REUSEPORT socket of the same port
 * (workerd accepts greedily: processes sharing one socket measured 0/32 and 4/28 of wrk's connections).
 * This attaches a reuseport program to the port's group that sends each new connection to a random
 * socket in `range` (indices in order of joining; the kernel keeps them dense, moving the last socket
 * into the slot of one that closes). A swap first pins connections to the running generation's
 * sockets, so the short-lived holder of the next ones never accepts one; once they are handed over, it
 * sends connections to the new sockets, where they wait until the new generation accepts, so the
 * retiring generation is never handed a connection it would close unread on SIGTERM (see
 * FunctionsRuntime for the order in which old sockets close). An index out of range makes the kernel
 * fall back to its own hash over all sockets. Node has no setsockopt: a python3 one-liner applies
 * SO_ATTACH_REUSEPORT_CBPF to an inherited fd of the group. Returns false without python3.
 */
export async function steerConnections(socket: ListeningSocket, range: SocketRange): Promise<boolean> {
  const script = [
    'import ctypes, socket',
    'class F(ctypes.Structure): _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]',
    'class P(ctypes.Structure): _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(F))]',
    // A = random (SKF_AD_OFF + SKF_AD_RANDOM); A %= count; A += base; return A.
    `code = (F * 4)(F(0x20, 0, 0, 0xfffff038), F(0x94, 0, 0, ${range.count}), F(0x04, 0, 0, ${range.base}), F(0x16, 0, 0, 0))`,
    'prog = P(4, code)',
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
