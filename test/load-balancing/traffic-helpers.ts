import { createHash } from 'node:crypto';
import {
  Agent,
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { TestLedge } from '../helpers/ledge.ts';
import { call } from '../notifications/api-helpers.ts';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/**
 * A real loopback origin that names itself: every answer carries `x-origin: <name>` and, by default, the
 * body `<name>`. Paths with a meaning: /echo streams the request body back; /bytes/<n> streams n bytes;
 * /slow/<ms> answers after a delay; /silent never answers; /huge-header answers with a 64 KiB header;
 * /headers answers the request headers as JSON; /health is for monitors. Upgrade requests get a minimal
 * WebSocket echo (text frames). `stop()` closes it (connections refused); `start()` again on the same port.
 */
export class NamedOrigin {
  readonly name: string;
  readonly seen: SeenRequest[] = [];
  port = 0;
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();

  constructor(name: string) {
    this.name = name;
  }

  static async start(name: string): Promise<NamedOrigin> {
    const origin = new NamedOrigin(name);
    await origin.start();
    return origin;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      if (req.url !== '/health') this.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      res.setHeader('x-origin', this.name);
      const url = req.url ?? '/';
      if (url === '/echo') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        req.pipe(res);
        return;
      }
      if (url === '/silent') return;
      if (url === '/headers') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers));
        return;
      }
      if (url === '/huge-header') {
        res.writeHead(200, { 'x-huge': 'h'.repeat(64 * 1024) }).end('huge');
        return;
      }
      const bytes = /^\/bytes\/(\d+)$/.exec(url);
      if (bytes) {
        streamBytes(res, Number(bytes[1]));
        return;
      }
      const slow = /^\/slow\/(\d+)$/.exec(url);
      req.resume();
      if (slow) {
        setTimeout(() => res.end(this.name), Number(slow[1]));
        return;
      }
      res.end(this.name);
    });
    server.on('upgrade', (req, socket, head) => this.#websocket(req, socket as Socket, head));
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of this.#sockets) socket.destroy();
    });
  }

  count(predicate: (request: SeenRequest) => boolean = () => true): number {
    return this.seen.filter(predicate).length;
  }

  /** A WebSocket echo: answers the handshake, then sends every text frame back with "<name>: " in front. */
  #websocket(req: IncomingMessage, socket: Socket, head: Buffer): void {
    this.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const key = req.headers['sec-websocket-key'];
    if (!key) return void socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n');
    const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    let buffer = head;
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const frame = readFrame(buffer);
        if (!frame) return;
        buffer = buffer.subarray(frame.length);
        if (frame.opcode === 8) return void socket.end(Buffer.from([0x88, 0]));
        if (frame.opcode === 1) socket.write(textFrame(`${this.name}: ${frame.payload.toString()}`));
      }
    };
    socket.on('data', onData);
    socket.on('error', () => socket.destroy());
    if (head.length > 0) onData(Buffer.alloc(0));
  }
}

function streamBytes(res: ServerResponse, total: number): void {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': total });
  let left = total;
  const pump = () => {
    while (left > 0) {
      const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
      left -= piece.length;
      if (!res.write(piece)) return void res.once('drain', pump);
    }
    res.end();
  };
  pump();
}

function readFrame(buffer: Buffer): { opcode: number; payload: Buffer; length: number } | undefined {
  if (buffer.length < 2) return undefined;
  const opcode = buffer[0]! & 0x0f;
  const masked = (buffer[1]! & 0x80) !== 0;
  let length = buffer[1]! & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (buffer.length < 4) return undefined;
    length = buffer.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (buffer.length < 10) return undefined;
    length = Number(buffer.readBigUInt64BE(2));
    offset = 10;
  }
  const maskAt = offset;
  if (masked) offset += 4;
  if (buffer.length < offset + length) return undefined;
  const payload = Buffer.from(buffer.subarray(offset, offset + length));
  if (masked) for (let i = 0; i < payload.length; i++) payload[i]! ^= buffer[maskAt + (i % 4)]!;
  return { opcode, payload, length: offset + length };
}

function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  if (payload.length >= 126) throw new Error('test frames are short');
  return Buffer.concat([Buffer.from([0x81, payload.length]), payload]);
}

export interface TrafficAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 64 });

/** A request to Ledge's traffic port for `host` (the Host header), as a client of the load balancer would send. */
export function trafficRequest(
  port: number,
  host: string,
  path = '/',
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer; agent?: Agent | false } = {},
): Promise<TrafficAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: init.method ?? 'GET',
        headers: { host, ...init.headers },
        agent: init.agent ?? keepAlive,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/** The traffic port of a test server. */
export function trafficPort(ledge: TestLedge): number {
  const port = ledge.server.platform.traffic.port;
  if (port === undefined) throw new Error('the traffic listener is not running');
  return port;
}

function resultId(answer: { status: number; body: { result: unknown; errors: unknown } }, what: string): string {
  if (answer.status !== 200) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body.errors)}`);
  return (answer.body.result as { id: string }).id;
}

export async function createZone(ledge: TestLedge, name: string): Promise<string> {
  return resultId(await call(ledge, 'POST', '/zones', { name, account: { id: ledge.accountId } }), 'zone');
}

export async function createMonitor(ledge: TestLedge, extra: Record<string, unknown> = {}): Promise<string> {
  const body = { type: 'http', interval: 1, timeout: 1, retries: 0, path: '/health', expected_codes: '2xx', ...extra };
  return resultId(await call(ledge, 'POST', `/accounts/${ledge.accountId}/load_balancers/monitors`, body), 'monitor');
}

export type PoolOrigin =
  | NamedOrigin
  | { origin: NamedOrigin; weight?: number; enabled?: boolean; header?: { Host: string[] } }
  | { name: string; address: string; port: number };

export async function createPool(
  ledge: TestLedge,
  name: string,
  origins: PoolOrigin[],
  extra: Record<string, unknown> = {},
): Promise<string> {
  const body = {
    name,
    origins: origins.map((entry) => {
      if (entry instanceof NamedOrigin) return { name: entry.name, address: '127.0.0.1', port: entry.port };
      if (!('origin' in entry)) return entry;
      const { origin, ...rest } = entry;
      return { name: origin.name, address: '127.0.0.1', port: origin.port, ...rest };
    }),
    ...extra,
  };
  return resultId(await call(ledge, 'POST', `/accounts/${ledge.accountId}/load_balancers/pools`, body), 'pool');
}

export async function createLoadBalancer(
  ledge: TestLedge,
  zoneId: string,
  body: Record<string, unknown>,
): Promise<string> {
  return resultId(await call(ledge, 'POST', `/zones/${zoneId}/load_balancers`, body), 'load balancer');
}

export async function patchLoadBalancer(
  ledge: TestLedge,
  zoneId: string,
  id: string,
  body: Record<string, unknown>,
): Promise<void> {
  resultId(await call(ledge, 'PATCH', `/zones/${zoneId}/load_balancers/${id}`, body), 'load balancer patch');
}

/** Counts answers by the origin that gave them (x-origin), over `n` sequential requests. */
export async function tally(
  port: number,
  host: string,
  n: number,
  headers: Record<string, string> = {},
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const answer = await trafficRequest(port, host, '/', { headers });
    const key = answer.status === 200 ? String(answer.headers['x-origin']) : `status ${answer.status}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
