import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One API call as the proxy saw it: from its request's first byte in to its response's last byte out. */
export interface TimedCall {
  method: string;
  path: string;
  status: number;
  startMs: number;
  endMs: number;
}

/**
 * A pass-through HTTP proxy in front of Ledge's API that times each call: what a client such as wrangler
 * spends waiting on the server, apart from its own start-up and work between calls.
 */
export async function startTimingProxy(
  targetPort: number,
): Promise<{ url: string; calls: TimedCall[]; close(): void }> {
  const calls: TimedCall[] = [];
  const server: Server = createServer((req, res) => {
    const startMs = performance.now();
    const upstream = request(
      { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        res.on('finish', () =>
          calls.push({
            method: req.method ?? '',
            path: (req.url ?? '').split('?')[0]!,
            status: answer.statusCode ?? 0,
            startMs,
            endMs: performance.now(),
          }),
        );
      },
    );
    upstream.on('error', (error) => res.destroy(error));
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/client/v4`, calls, close: () => server.close() };
}

/** Time (ms) during which at least one of `calls` was in flight: overlapping uploads count once. */
export function busyMs(calls: readonly TimedCall[]): number {
  const sorted = [...calls].sort((a, b) => a.startMs - b.startMs);
  let total = 0;
  let [from, to] = [-Infinity, -Infinity];
  for (const call of sorted) {
    if (call.startMs > to) {
      if (to > from) total += to - from;
      [from, to] = [call.startMs, call.endMs];
    } else to = Math.max(to, call.endMs);
  }
  if (to > from) total += to - from;
  return total;
}
