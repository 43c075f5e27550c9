/* global process */
// Runs as a short-lived child of `ledge server`: opens the functions listening socket and sends the raw
// handle back over IPC, then exits. The parent receives it as a bare TCP handle that its event loop does
// not poll, so the parent never accepts a connection itself: only workerd (which inherits the fd) does.
// Plain JavaScript on purpose: a child started from a .ts file first loads Node's TypeScript stripper,
// which doubled this process's start (~170 -> ~70 ms) and with it `ledge server`'s time to first response.
import { createServer } from 'node:net';

const [port, host] = [Number(process.argv[2] ?? '0'), process.argv[3] ?? '127.0.0.1'];
const server = createServer();
server.once('error', (error) => {
  process.send?.({ error: `${error.code ?? 'error'}: ${error.message}` }, () => process.exit(1));
});
// reusePort: each workerd generation gets its own socket on the same port (see listen-socket.ts).
server.listen({ port, host, backlog: 4096, reusePort: true }, () => {
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  // The libuv handle itself, not the net.Server: the parent must get a handle it does not accept on.
  const handle = server._handle;
  process.send?.({ port: actualPort }, handle, { keepOpen: false }, () => process.exit(0));
});
