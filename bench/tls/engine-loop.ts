// The data plane's own JavaScript per proxied request, without sockets: the request head parsed and the
// origin's head built (client-connection.ts, heads.ts), the origin's answer parsed and the client's built
// (proxy-exchange.ts), for the bench's request (wrk's) and nginx's answer; beside it, what the node:tls proxy
// floor (node-tls-proxy-floor.ts) does with the same bytes. In-process loops read far steadier than the
// HTTPS bench on a shared machine: they bound what the engine's parsing and rewriting can cost per request.
// Usage: node bench/tls/engine-loop.ts [iterations, default 1e6]
import { BodyFramer } from '../../src/proxy/raw/body-framer.ts';
import { headEnd, parseRequestHead, parseResponseHead } from '../../src/proxy/raw/head-parser.ts';
import { downstreamResponse, upstreamHead } from '../../src/proxy/raw/heads.ts';
import { hostnameOf } from '../../src/shared/hostname.ts';

const ITERATIONS = Number(process.argv[2] ?? 1e6);
const request = Buffer.from('GET /1k.bin HTTP/1.1\r\nHost: lb.bench.test:41234\r\n\r\n', 'latin1');
const answer = Buffer.concat([
  Buffer.from(
    'HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sun, 29 Nov 2026 12:00:00 GMT\r\n' +
      'Content-Type: application/octet-stream\r\nContent-Length: 1024\r\nLast-Modified: Sun, 29 Nov 2026 11:59:00 GMT\r\n' +
      'Connection: keep-alive\r\nETag: "6a4b8c3e-400"\r\nAccept-Ranges: bytes\r\n\r\n',
    'latin1',
  ),
  Buffer.alloc(1024, 'a'),
]);
const HEAD_END = Buffer.from('\r\n\r\n');

function engine(): number {
  const end = headEnd(request, 0);
  const head = parseRequestHead(request, 0, end);
  const host = hostnameOf(head.host);
  const upstream = upstreamHead(head, undefined, '127.0.0.1', true);
  const responseEnd = headEnd(answer, 0);
  const response = parseResponseHead(answer, 0, responseEnd);
  const framer = new BodyFramer().length(response.contentLength);
  const taken = framer.consume(answer, responseEnd);
  const out = downstreamResponse(response, true, undefined, false, answer, responseEnd + taken);
  return host.length + upstream.length + out.length;
}

function floor(): number {
  const text = request.toString('latin1', 0, request.indexOf(HEAD_END));
  const close = /\r\nconnection: *close/i.test(text);
  const lines = text.split('\r\n').filter((line) => !/^connection:/i.test(line));
  const upstream = `${lines.join('\r\n')}\r\nx-forwarded-proto: https\r\n\r\n`;
  const end = answer.indexOf(HEAD_END);
  const length = /\r\ncontent-length: *(\d+)/i.exec(answer.toString('latin1', 0, end));
  const out = Buffer.from(answer.subarray(0, end + 4 + Number(length![1])));
  return upstream.length + out.length + (close ? 1 : 0);
}

function time(name: string, fn: () => number): void {
  let sink = 0;
  for (let i = 0; i < ITERATIONS / 10; i++) sink += fn();
  const start = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) sink += fn();
  const used = process.cpuUsage(start);
  console.log(`${name}: ${(((used.user + used.system) * 1000) / ITERATIONS).toFixed(0)} ns per request (${sink > 0})`);
}

for (let round = 0; round < 3; round++) {
  time('engine', engine);
  time('floor', floor);
}
