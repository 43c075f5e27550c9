/* global process */
// Runs as a short-lived child of `ledge server`: opens the functions listening sockets (one per workerd
// process of a generation, all SO_REUSEPORT on one port, in order), or with `unix <path>...` the unix
// sockets of the accounts' backend processes, and sends each raw handle back over IPC, then exits once the
// parent disconnects (it has them all). The parent receives them as bare TCP handles that its event loop does
// not poll, so the parent never accepts a connection itself: only workerd (which inherits the fds) does.
// Plain JavaScript on purpose: a child started from a .ts file first loads Node's TypeScript stripper,
// which doubled this process's start (~170 -> ~70 ms) and with it `ledge server`'s time to first response.
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';

const unixPaths = process.argv[2] === 'unix' ? process.argv.slice(3) : undefined;
const port = Number(process.argv[2] ?? '0');
const host = process.argv[3] ?? '127.0.0.1';
const count = Number(process.argv[4] ?? '1');

/**
 * Exits once the parent has taken every handle and disconnects (or is gone). Exiting as soon as the last
 * send completed let a busy parent see the exit before the last message and fail the start or deploy with
 * "socket holder exited (0) before handing over the sockets" (CI, failure-domains-load, 2026-11-26).
 */
function exitWhenTaken() {
  if (process.connected) process.once('disconnect', () => process.exit(0));
  else process.exit(0);
}

function fail(error) {
  process.send?.({ error: `${error.code ?? 'error'}: ${error.message}` }, () => process.exit(1));
}

/** Listens on `port` (0: any) and resolves with the libuv handle and the port it got. */
function listen(onPort) {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    // reusePort: the sockets of every generation share the port (see listen-socket.ts).
    server.listen({ port: onPort, host, backlog: 4096, reusePort: true }, () => {
      const address = server.address();
      // The libuv handle itself, not the net.Server: the parent must get a handle it does not accept on.
      resolve({ handle: server._handle, port: typeof address === 'object' && address ? address.port : onPort });
    });
  });
}

/** Listens on a unix socket path (a stale file of a killed server is replaced). */
function listenUnix(path) {
  rmSync(path, { force: true });
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ path, backlog: 4096 }, () => resolve({ handle: server._handle, port: 0 }));
  });
}

try {
  if (unixPaths) {
    for (const [index, path] of unixPaths.entries()) {
      const socket = await listenUnix(path);
      await new Promise((resolve) => process.send({ port: 0, index }, socket.handle, { keepOpen: false }, resolve));
    }
    exitWhenTaken();
  } else {
    // One after the other: the order they join the port's reuseport group is the order of their indices.
    const first = await listen(port);
    const sockets = [first];
    for (let i = 1; i < count; i++) sockets.push(await listen(first.port));
    for (const [index, socket] of sockets.entries()) {
      await new Promise((resolve) =>
        process.send({ port: first.port, index }, socket.handle, { keepOpen: false }, resolve),
      );
    }
    exitWhenTaken();
  }
} catch (error) {
  fail(error);
}
