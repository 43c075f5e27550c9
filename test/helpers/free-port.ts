import { createServer } from 'node:net';

/**
 * A port that was free on 127.0.0.1 a moment ago, for servers that must be told their port up front
 * (PostgreSQL, peers in benchmarks); a server that can bind port 0 itself should do that instead.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
