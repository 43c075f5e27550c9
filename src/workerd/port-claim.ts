import { createServer, type Server } from 'node:net';
import { portInUse, type PortSetting } from '../shared/http-listener/port-in-use.ts';

/** A functions port this server owns until release(); see claimFunctionsPort. */
export interface PortClaim {
  release(): void;
}

/**
 * Makes sure no other process serves `host:port` before this server opens its SO_REUSEPORT sockets
 * there. Those sockets are shared on purpose between the workerd generations of one server, but the
 * kernel lets any process of the same user join the group, so a second server would silently take a
 * share of the first one's connections. Two checks, both before this server holds a socket on the port:
 * - a lock that only one Ledge server can hold at a time: a Linux abstract Unix socket named after the
 *   address (no file to go stale: the kernel frees it when the process dies, even by SIGKILL), which
 *   also catches two servers starting at the same moment;
 * - a probe bind without SO_REUSEPORT, which fails while any other socket (reuseport or not, Ledge or
 *   not) is bound to the port.
 * Port 0 (any free port) needs neither. Rejects with an error naming the port.
 */
export async function claimFunctionsPort(host: string, port: number, setting: PortSetting): Promise<PortClaim> {
  if (port === 0) return { release: () => undefined };
  const lock = await holdLock(host, port, setting);
  try {
    await probe(host, port, setting);
  } catch (error) {
    lock?.close();
    throw error;
  }
  return { release: () => lock?.close() };
}

/** Resolves with the listening lock socket, or undefined where abstract sockets do not exist (not Linux). */
function holdLock(host: string, port: number, setting: PortSetting): Promise<Server | undefined> {
  if (process.platform !== 'linux') return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    // Nobody connects to it; should someone, the connection is dropped at once.
    const lock = createServer((socket) => socket.destroy());
    lock.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') reject(portInUse('functions', host, port, setting));
      else resolve(undefined);
    });
    lock.listen(`\0ledge-functions-port:${host}:${port}`, () => {
      // The lock must not keep the process alive on its own.
      lock.unref();
      resolve(lock);
    });
  });
}

function probe(host: string, port: number, setting: PortSetting): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? portInUse('functions', host, port, setting)
          : new Error(`cannot listen on ${host}:${port} for functions: ${error.message}`),
      );
    });
    // exclusive, no reusePort: this bind fails if any other socket holds the port. Closed at once, before
    // anything could connect to it (nobody serves the port, or the bind would have failed).
    server.listen({ host, port, exclusive: true, backlog: 1 }, () => server.close(() => resolve()));
  });
}
