import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A real HTTP server on 127.0.0.1 that counts the connections it accepts ("nothing was sent to it"). */
export interface CountingServer {
  port: number;
  connections: number;
  requests: number;
  close(): Promise<void>;
}

export async function startCountingServer(
  handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('ok'),
): Promise<CountingServer> {
  const counter = { port: 0, connections: 0, requests: 0 } as CountingServer;
  const server: Server = createServer((req, res) => {
    counter.requests++;
    handle(req, res);
  });
  server.on('connection', () => counter.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  counter.port = (server.address() as AddressInfo).port;
  counter.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return counter;
}

/** Answers 200 at once, then trickles its body one byte at a time and never ends it. */
export function trickle(intervalMs = 200) {
  return (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('.');
    const timer = setInterval(() => res.write('.'), intervalMs);
    res.on('close', () => clearInterval(timer));
  };
}
