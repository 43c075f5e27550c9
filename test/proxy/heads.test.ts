import { describe, expect, it } from 'vitest';
import { parseResponseHead } from '../../src/proxy/raw/head-parser.ts';
import { downstreamHead, downstreamResponse } from '../../src/proxy/raw/heads.ts';

const NGINX =
  'HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Sun, 29 Nov 2026 09:00:00 GMT\r\nContent-Type: text/plain\r\n' +
  'Content-Length: 5\r\nLast-Modified: Sun, 29 Nov 2026 08:00:00 GMT\r\nConnection: keep-alive\r\n' +
  'ETag: "1-5"\r\nAccept-Ranges: bytes';

/** Heads of every shape the relay rewrites, each with the body bytes that follow it in the read. */
const HEADS: [string, string][] = [
  [NGINX, 'hello'],
  // The last line dropped; the first line dropped; only droppable lines; no header line at all.
  ['HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\nConnection: keep-alive', 'hello'],
  ['HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 5\r\nX-A: 1', 'hello'],
  ['HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\nConnection: keep-alive\r\nContent-Length: 0', ''],
  ['HTTP/1.1 204 No Content', ''],
  // Status lines written anew: HTTP/1.0, no reason, an empty reason, an unusual reason kept.
  ['HTTP/1.0 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive', 'hello'],
  ['HTTP/1.1 404\r\nContent-Length: 2', 'no'],
  ['HTTP/1.1 500 \r\nContent-Length: 2', 'no'],
  ['HTTP/1.1 299 Fine Thanks\r\nContent-Length: 2', 'ok'],
  // Chunked with a Content-Length (dropped), a coding line kept; a Connection header naming another line.
  ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 9\r\nX-B: 2', '5\r\nhello\r\n0\r\n\r\n'],
  ['HTTP/1.1 200 OK\r\nConnection: X-Trace\r\nX-Trace: abc\r\nContent-Length: 5\r\nX-C: 3', 'hello'],
  // A body that runs to the end of the connection.
  ['HTTP/1.1 200 OK\r\nContent-Type: text/plain', 'stream'],
];

describe('the response relayed in one write', () => {
  it('is the head downstreamHead writes followed by the body, for every shape, cookie and close', () => {
    for (const [text, body] of HEADS) {
      const buffer = Buffer.from(`${text}\r\n\r\n${body}`, 'latin1');
      const end = text.length + 4;
      const response = parseResponseHead(buffer, 0, end);
      for (const hasBody of [true, false]) {
        for (const cookie of [undefined, '__cflb=abc; Path=/; HttpOnly']) {
          for (const close of [false, true]) {
            const bodyEnd = hasBody ? buffer.length : end;
            const expected = `${downstreamHead(response, hasBody, cookie, close)}${hasBody ? body : ''}`;
            const got = downstreamResponse(response, hasBody, cookie, close, buffer, bodyEnd);
            expect(got.toString('latin1'), JSON.stringify({ text, hasBody, cookie, close })).toBe(expected);
          }
        }
      }
    }
  });

  it("relays nginx's answer as its bytes, minus the Connection line", () => {
    const buffer = Buffer.from(`${NGINX}\r\n\r\nhello`, 'latin1');
    const response = parseResponseHead(buffer, 0, NGINX.length + 4);
    const out = downstreamResponse(response, true, undefined, false, buffer, buffer.length).toString('latin1');
    expect(out).toBe(`${NGINX.replace('Connection: keep-alive\r\n', '')}\r\n\r\nhello`);
  });
});
