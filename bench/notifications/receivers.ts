/**
 * Child process of the notifications benchmark: N webhook receivers on 127.0.0.1. Each records which
 * event ids it got (to prove nothing is lost) and the event-to-delivery latency of every first arrival.
 * Controlled over IPC: {cmd:'start'|'stop'|'stats'|'exit'}.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const count = Number(process.argv[2] ?? '10');
const seen: Set<number>[] = Array.from({ length: count }, () => new Set());
let latencies: number[] = [];
let duplicates = 0;
const servers: (Server | undefined)[] = Array.from({ length: count }, () => undefined);
const ports: number[] = Array.from({ length: count }, () => 0);

function listen(index: number): Promise<void> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        data?: { event_id: number; occurred_at: string };
      };
      if (body.data) {
        const ids = seen[index]!;
        if (ids.has(body.data.event_id)) duplicates++;
        else {
          ids.add(body.data.event_id);
          latencies.push(Date.now() - Date.parse(body.data.occurred_at));
        }
      }
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  servers[index] = server;
  return new Promise((resolve) =>
    server.listen(ports[index], '127.0.0.1', () => {
      ports[index] = (server.address() as AddressInfo).port;
      resolve();
    }),
  );
}

function close(index: number): Promise<void> {
  const server = servers[index];
  servers[index] = undefined;
  return new Promise((resolve) => {
    if (!server) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

process.on('message', (message: { cmd: string }) => {
  void (async () => {
    if (message.cmd === 'start') {
      await Promise.all(ports.map((_, i) => listen(i)));
      process.send!({ ports });
    } else if (message.cmd === 'stop') {
      await Promise.all(ports.map((_, i) => close(i)));
      process.send!({ stopped: true });
    } else if (message.cmd === 'stats') {
      const cpu = process.cpuUsage();
      process.send!({
        received: seen.map((ids) => ids.size),
        duplicates,
        latencies,
        cpu_s: (cpu.user + cpu.system) / 1e6,
      });
      latencies = [];
    } else if (message.cmd === 'reset') {
      for (const ids of seen) ids.clear();
      duplicates = 0;
      latencies = [];
      process.send!({ reset: true });
    } else if (message.cmd === 'exit') {
      await Promise.all(ports.map((_, i) => close(i)));
      process.exit(0);
    }
  })();
});
process.send!({ ready: true });
