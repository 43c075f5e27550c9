import { request } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { ManualClock } from '../helpers/manual-clock.ts';
import { waitFor } from '../helpers/wait.ts';
import { createLoadBalancer, createPool, createZone, trafficPort } from './traffic-helpers.ts';

/**
 * The raw data plane's HTTP/1.1 handling on real loopback sockets: a scripted origin answers bytes chosen
 * per request path (split heads, chunked bodies with extensions and trailers, no-body statuses, closes),
 * and raw clients send heads a node:http client would never send (pipelining, malformed heads).
 */

interface OriginRequest {
  head: string;
  body: Buffer;
  connection: number;
}

/** An origin that reads each request (Content-Length or chunked body) and answers with `script(path)`. */
class ScriptedOrigin {
  readonly requests: OriginRequest[] = [];
  connections = 0;
  server!: Server;
  readonly script: (path: string, socket: Socket, request: OriginRequest) => void;

  constructor(script: (path: string, socket: Socket, request: OriginRequest) => void) {
    this.script = script;
  }

  async start(): Promise<number> {
    this.server = createServer((socket) => {
      const connection = ++this.connections;
      let buffer = Buffer.alloc(0);
      socket.on('error', () => socket.destroy());
      socket.on('data', (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        for (;;) {
          const end = buffer.indexOf('\r\n\r\n');
          if (end < 0) return;
          const head = buffer.subarray(0, end + 4).toString('latin1');
          let bodyEnd = end + 4;
          const length = /\r\ncontent-length: *(\d+)/i.exec(head);
          if (length) bodyEnd += Number(length[1]);
          else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
            const last = buffer.indexOf('\r\n0', end + 2);
            const final = last < 0 ? -1 : buffer.indexOf('\r\n\r\n', last + 3);
            if (final < 0) return;
            bodyEnd = final + 4;
          }
          if (buffer.length < bodyEnd) return;
          const seen = { head, body: buffer.subarray(end + 4, bodyEnd), connection };
          buffer = buffer.subarray(bodyEnd);
          this.requests.push(seen);
          this.script(head.split(' ')[1]!, socket, seen);
        }
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }
}

/** Writes `bytes` (each string of an array in its own packet) and reads until `done(text)` or the close. */
function rawClient(
  port: number,
  bytes: string | string[],
  done: (text: string) => boolean = () => false,
): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer; got ${JSON.stringify(text)}`));
    }, 30_000);
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed });
    };
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (done(text)) finish(false);
    });
    socket.on('end', () => finish(true));
    socket.on('error', () => finish(true));
    const pieces = Array.isArray(bytes) ? bytes : [bytes];
    let at = 0;
    const next = () => {
      if (at >= pieces.length) return;
      socket.write(pieces[at++]!);
      setTimeout(next, 5);
    };
    next();
  });
}

const count = (text: string, what: string) => text.split(what).length - 1;

describe('load balancer traffic: HTTP/1.1 on the raw data plane', () => {
  let ledge: TestLedge;
  let port: number;
  let host: string;
  const origin = new ScriptedOrigin((path, socket, seen) => {
    const send = (text: string) => socket.write(text);
    switch (path) {
      case '/split': {
        // A head and body in one-byte packets: the proxy must reassemble both.
        const answer = 'HTTP/1.1 200 OK\r\nx-split: yes\r\ncontent-length: 11\r\n\r\nhello world';
        let i = 0;
        const drip = () => {
          if (i < answer.length) socket.write(answer[i++]!, () => setTimeout(drip, 1));
        };
        return drip();
      }
      case '/chunked':
        return send(
          'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ntrailer: x-sum\r\n\r\n' +
            '5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nx-sum: 42\r\n\r\n',
        );
      case '/no-content':
        return send('HTTP/1.1 204 No Content\r\nx-kind: 204\r\n\r\n');
      case '/not-modified':
        return send('HTTP/1.1 304 Not Modified\r\netag: "v1"\r\ncontent-length: 99\r\n\r\n');
      case '/head':
        return send('HTTP/1.1 200 OK\r\ncontent-length: 1234\r\n\r\n');
      case '/until-close':
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nall of ');
        return void setTimeout(() => socket.end('this body'), 20);
      case '/close':
        socket.end('HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 6\r\n\r\nclosed');
        return;
      case '/interim':
        return send(
          'HTTP/1.1 103 Early Hints\r\nlink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nfinal',
        );
      case '/bad-chunks':
        // The head is relayed first; the broken framing comes after.
        send('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello');
        return void setTimeout(() => send('XX0\r\n\r\n'), 30);
      case '/bad-chunks-at-once':
        return send('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n');
      case '/hop-by-hop':
        // Hop-by-hop lines (and one the Connection header names) among ordinary ones, odd spacing kept.
        return send(
          'HTTP/1.1 200 OK\r\nServer: scripted\r\nConnection: keep-alive, X-Private\r\nX-Private: secret\r\n' +
            'Keep-Alive: timeout=5\r\nX-Spaced:   two words  \r\nTrailer: x-never\r\nContent-Length: 2\r\n' +
            'Upgrade: h2c\r\nX-Last: end\r\n\r\nok',
        );
      case '/bad-header-space':
        return send('HTTP/1.1 200 OK\r\nX-Bad : value\r\ncontent-length: 2\r\n\r\nok');
      case '/bad-header-lf':
        return send('HTTP/1.1 200 OK\r\nX-Bad: one\ntwo\r\ncontent-length: 2\r\n\r\nok');
      case '/bad-header-cr':
        return send('HTTP/1.1 200 OK\r\nX-Bad: one\rtwo\r\ncontent-length: 2\r\n\r\nok');
      case '/bad-header-control':
        return send('HTTP/1.1 200 OK\r\nX-Bad: one\x01two\r\ncontent-length: 2\r\n\r\nok');
      case '/bad-header-folded':
        return send('HTTP/1.1 200 OK\r\nX-Bad: one\r\n two\r\ncontent-length: 2\r\n\r\nok');
      case '/bad-header-no-colon':
        return send('HTTP/1.1 200 OK\r\nX-Bad\r\ncontent-length: 2\r\n\r\nok');
      case '/echo':
        return send(`HTTP/1.1 200 OK\r\ncontent-length: ${seen.body.length}\r\n\r\n${seen.body.toString('latin1')}`);
      default:
        return send(`HTTP/1.1 200 OK\r\ncontent-length: ${path.length}\r\n\r\n${path}`);
    }
  });

  beforeAll(async () => {
    ledge = await startLedge({
      env: { LEDGE_HTTP_HEADERS_TIMEOUT_MS: '1000', LEDGE_HTTP_IDLE_TIMEOUT_MS: '1500' },
    });
    port = trafficPort(ledge);
    const originPort = await origin.start();
    const zone = await createZone(ledge, 'raw.test');
    const pool = await createPool(ledge, 'raw', [{ name: 'scripted', address: '127.0.0.1', port: originPort }]);
    host = 'www.raw.test';
    await createLoadBalancer(ledge, zone, { name: host, default_pools: [pool], fallback_pool: pool });
  });
  afterAll(async () => {
    await ledge.close();
    origin.server.close();
  });

  const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nhost: ${host}\r\n${extra}\r\n`;

  it('reassembles a response that arrives one byte per packet', async () => {
    const { text } = await rawClient(port, get('/split'), (t) => t.endsWith('hello world'));
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).toContain('\r\nx-split: yes\r\n');
    expect(text).toContain('\r\ncontent-length: 11\r\n');
  });

  it('relays a chunked body byte for byte, extensions and trailers included; node:http reads its trailers', async () => {
    const { text } = await rawClient(port, get('/chunked'), (t) => t.endsWith('0\r\nx-sum: 42\r\n\r\n'));
    expect(text).toContain('\r\ntransfer-encoding: chunked\r\n');
    expect(text).toContain('\r\n\r\n5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nx-sum: 42\r\n\r\n');
    const trailers = await new Promise<Record<string, string | undefined>>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/chunked', headers: { host } }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ body, sum: res.trailers['x-sum'] }));
      })
        .on('error', reject)
        .end();
    });
    expect(trailers).toEqual({ body: 'hello world', sum: '42' });
  });

  it('204, 304 and HEAD answers have no body: the same connection serves the next request at once', async () => {
    const { text } = await rawClient(
      port,
      get('/no-content') + get('/not-modified') + `HEAD /head HTTP/1.1\r\nhost: ${host}\r\n\r\n` + get('/after'),
      (t) => t.endsWith('/after'),
    );
    expect(count(text, 'HTTP/1.1 ')).toBe(4);
    expect(text).toMatch(/^HTTP\/1\.1 204 No Content\r\n/);
    expect(text).toContain('HTTP/1.1 304 Not Modified\r\netag: "v1"\r\ncontent-length: 99\r\n\r\nHTTP/1.1 200');
    expect(text).toContain('content-length: 1234\r\n\r\nHTTP/1.1 200 OK');
  });

  it('pipelined requests are answered in order on one connection', async () => {
    const { text } = await rawClient(port, get('/one') + get('/two') + get('/three'), (t) => t.endsWith('/three'));
    expect(text.indexOf('/one')).toBeLessThan(text.indexOf('/two'));
    expect(text.indexOf('/two')).toBeLessThan(text.indexOf('/three'));
  });

  it('a body that runs to the origin closing reaches the client, whose connection then closes', async () => {
    const { text, closed } = await rawClient(port, get('/until-close'));
    expect(closed).toBe(true);
    expect(text).toContain('\r\nconnection: close\r\n');
    expect(text.endsWith('\r\n\r\nall of this body')).toBe(true);
  });

  it('origin connections are reused, except one the origin closed', async () => {
    const before = origin.connections;
    const { text } = await rawClient(port, get('/close') + get('/a') + get('/b'), (t) => t.endsWith('/b'));
    expect(text).toContain('closed');
    expect(text).not.toContain('connection: close');
    // /close used one connection and ended it; /a and /b share one (or reuse an idle one from before).
    expect(origin.connections - before).toBeLessThanOrEqual(2);
    const used = origin.requests.slice(-2).map((seen) => seen.connection);
    expect(used[0]).toBe(used[1]);
  });

  it('drops interim 1xx answers and relays the final one', async () => {
    const { text } = await rawClient(port, get('/interim'), (t) => t.endsWith('final'));
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).not.toContain('103');
  });

  it('broken chunked framing from the origin: 502 before the head was relayed, a broken response after', async () => {
    const atOnce = await rawClient(port, get('/bad-chunks-at-once'), (t) => t.includes('error code'));
    expect(atOnce.text).toMatch(/^HTTP\/1\.1 502 /);
    const { text, closed } = await rawClient(port, get('/bad-chunks'));
    expect(closed).toBe(true);
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).not.toContain('0\r\n\r\n');
  });

  it('relays a chunked request body (extensions, trailers) and a Content-Length one in packets', async () => {
    const chunked = await rawClient(
      port,
      [
        `POST /echo HTTP/1.1\r\nhost: ${host}\r\ntransfer-encoding: chunked\r\n\r\n`,
        '3;x=y\r\nabc\r\n',
        '2\r\nde\r\n0\r\nx-t: 1\r\n\r\n',
      ],
      (t) => t.includes('\r\n\r\n3;x=y'),
    );
    expect(chunked.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(origin.requests.at(-1)!.body.toString()).toBe('3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nx-t: 1\r\n\r\n');
    expect(origin.requests.at(-1)!.head).toMatch(/\r\ntransfer-encoding: chunked\r\n/);

    const sized = await rawClient(
      port,
      [`PUT /echo HTTP/1.1\r\nhost: ${host}\r\ncontent-length: 10\r\n\r\n01234`, '56789'],
      (t) => t.endsWith('0123456789'),
    );
    expect(sized.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  });

  it('Expect: 100-continue gets its 100 and the answer (node:http serves that connection)', async () => {
    const { text } = await rawClient(
      port,
      `POST /echo HTTP/1.1\r\nhost: ${host}\r\nexpect: 100-continue\r\ncontent-length: 4\r\n\r\n`,
      (t) => t.includes('HTTP/1.1 100 Continue'),
    );
    expect(text).toContain('HTTP/1.1 100 Continue');
  });

  it.each([
    ['bare LF line ends', `GET / HTTP/1.1\nhost: x\n\n`],
    ['a space before the colon', `GET / HTTP/1.1\r\nhost : x\r\n\r\n`],
    [
      'Transfer-Encoding with Content-Length',
      `POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n`,
    ],
    ['conflicting Content-Length', `POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\n`],
    ['a folded header line', `GET / HTTP/1.1\r\nhost: x\r\nx-a: 1\r\n  folded\r\n\r\n`],
    ['no Host', `GET / HTTP/1.1\r\nx-a: 1\r\n\r\n`],
    ['a control character in a value', `GET / HTTP/1.1\r\nhost: x\r\nx-a: 1\u0001\r\n\r\n`],
  ])('answers 400 and closes for %s', async (_what, head) => {
    const { text, closed } = await rawClient(port, head);
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(closed).toBe(true);
  });

  it('a head that never completes gets 408 after the headers timeout, on the raw path and on node:http', async () => {
    const raw = await rawClient(port, `GET / HTTP/1.1\r\nhost: ${host}\r\n`);
    expect(raw.text).toMatch(/^HTTP\/1\.1 408 /);
    // An HTTP/1.0 keep-alive connection is node:http's; its next head is bounded too.
    const handedOff = await rawClient(
      port,
      `GET /ten HTTP/1.0\r\nhost: ${host}\r\nconnection: keep-alive\r\n\r\nGET /next HTTP/1.0\r\nhost: x`,
    );
    expect(handedOff.text).toContain('/ten');
    expect(handedOff.text).toContain('HTTP/1.1 408 ');
  });

  it('a connection with no byte either way for the idle timeout is closed', async () => {
    const started = Date.now();
    // A silent client: the response came, then nothing more is sent.
    const { text, closed } = await rawClient(port, get('/quiet'));
    expect(text).toContain('/quiet');
    expect(closed).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
  });

  it('relays response header lines as sent, without hop-by-hop ones and those the Connection header names', async () => {
    const { text } = await rawClient(port, get('/hop-by-hop'), (t) => t.endsWith('\r\n\r\nok'));
    expect(text).toBe(
      'HTTP/1.1 200 OK\r\nServer: scripted\r\nX-Spaced:   two words  \r\nContent-Length: 2\r\nX-Last: end\r\n\r\nok',
    );
  });

  for (const kind of ['space', 'lf', 'cr', 'control', 'folded', 'no-colon']) {
    it(`answers 502 for a response header line with ${kind === 'space' ? 'a space before the colon' : kind === 'lf' || kind === 'cr' ? `a bare ${kind.toUpperCase()}` : kind === 'control' ? 'a control character' : kind === 'folded' ? 'a folded value' : 'no colon'}`, async () => {
      const { text } = await rawClient(port, get(`/bad-header-${kind}`), (t) => t.includes('\r\n\r\n'));
      expect(text).toMatch(/^HTTP\/1\.1 502 /);
      expect(text).not.toContain('X-Bad');
    });
  }

  it('answers 431 for a request head over 16 KiB', async () => {
    const { text } = await rawClient(port, get('/', `x-big: ${'b'.repeat(17 * 1024)}\r\n`));
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
  });
});

// The data plane's timeouts run on the listener's own clock (its coarse clock starts at that clock's time
// when it listens). A regression: the coarse clock was once the process's, and a server started after another
// had stopped stamped its first connections with that server's last sweep, so its first sweep found them idle
// and closed them without an answer instead of 408.
describe('a proxy on a manual clock', () => {
  const clock = new ManualClock();
  let late: TestLedge;
  afterAll(async () => {
    await late?.close();
  });

  it('answers a stalled head 408 instead of dropping it as idle', async () => {
    late = await startLedge({
      clock,
      env: { LEDGE_HTTP_HEADERS_TIMEOUT_MS: '1000', LEDGE_HTTP_IDLE_TIMEOUT_MS: '1500' },
    });
    let settled = false;
    const answer = rawClient(trafficPort(late), 'GET / HTTP/1.1\r\nhost: stalled.test\r\n').finally(() => {
      settled = true;
    });
    await waitFor(async () => {
      await clock.advance(1_100);
      return settled;
    }, 'an answer to the stalled head');
    const { text } = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
  });
});
