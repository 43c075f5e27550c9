import { describe, expect, it } from 'vitest';
import { HeadError, parseRequestHead, parseResponseHead } from '../../src/proxy/raw/head-parser.ts';

const request = (connection: string) => {
  const head = Buffer.from(`GET / HTTP/1.1\r\nHost: a.test\r\nConnection: ${connection}\r\n\r\n`, 'latin1');
  return parseRequestHead(head, 0, head.length);
};
const response = (connection: string, minor = 1) => {
  const head = Buffer.from(
    `HTTP/1.${minor} 200 OK\r\nContent-Length: 2\r\nConnection: ${connection}\r\n\r\n`,
    'latin1',
  );
  return parseResponseHead(head, 0, head.length);
};

describe('the Connection header of a head', () => {
  it('reads close and keep-alive in any letter case, alone or in a list', () => {
    for (const value of ['close', 'Close', 'CLOSE', 'keep-alive, close', 'foo,close']) {
      expect(request(value).close, value).toBe(true);
      expect(response(value).close, value).toBe(true);
    }
    for (const value of ['keep-alive', 'Keep-Alive', 'KEEP-ALIVE']) {
      expect(request(value).close, value).toBe(false);
      // HTTP/1.0 closes unless the message asks to keep the connection.
      expect(response(value, 0).close, value).toBe(false);
    }
  });

  it('keeps the other tokens it names (their lines are hop-by-hop), lowercased', () => {
    expect(request('Keep-Alive, X-Trace').connectionTokens).toEqual(['x-trace']);
    expect(request('closed').connectionTokens).toEqual(['closed']);
    expect(request('closed').close).toBe(false);
    expect(request('keep-alivex').connectionTokens).toEqual(['keep-alivex']);
    expect(response('Upgrade').connectionTokens).toEqual(['upgrade']);
  });
});

describe('the header lines of a response head', () => {
  const parse = (lines: string) => {
    const head = Buffer.from(`xx HTTP/1.1 200 OK\r\n${lines}\r\n\r\n`, 'latin1');
    // (The head starts 3 bytes into the buffer, as it may in a read that holds more.)
    return parseResponseHead(head, 3, head.length);
  };

  it('accepts tokens, field characters, tabs and obs-text, and an empty value', () => {
    const head = parse("X-A: v\tw\xe9\xff\r\nX-B:\r\nContent-Length:  12 \r\n!#$%&'*+-.^_`|~09az:y");
    expect(head.framing).toBe('length');
    expect(head.contentLength).toBe(12);
    expect(head.text.slice(head.fieldsStart)).toContain('X-B:');
  });

  it('refuses a line without a name or colon, a space or DEL, a bare CR or LF, a folded line', () => {
    for (const lines of [
      ': v',
      'X-A v',
      'X-A : v',
      'X-A: v\x7f',
      'X-A: v\rw',
      'X-A: v\nw',
      'X-A: v\r\n w',
      'X\x01: v',
    ]) {
      expect(() => parse(lines), JSON.stringify(lines)).toThrow(HeadError);
    }
  });
});

describe('the status line of a response head', () => {
  const parse = (line: string) => {
    const head = Buffer.from(`xx ${line}\r\nContent-Length: 0\r\n\r\n`, 'latin1');
    return parseResponseHead(head, 3, head.length);
  };

  it('reads the version, the status and the reason, which may be empty, absent or unusual', () => {
    expect(parse('HTTP/1.1 200 OK')).toMatchObject({ minor: 1, status: 200, reason: 'OK' });
    expect(parse('HTTP/1.0 404 Not Found')).toMatchObject({ minor: 0, status: 404, reason: 'Not Found' });
    expect(parse('HTTP/1.1 503')).toMatchObject({ status: 503, reason: '' });
    expect(parse('HTTP/1.1 204 ')).toMatchObject({ status: 204, reason: '' });
    expect(parse('HTTP/1.1 299 A\tb \xe9\xff ~')).toMatchObject({ status: 299, reason: 'A\tb \xe9\xff ~' });
  });

  it('refuses any other version, a status not of three digits, a reason not after one space, a control', () => {
    for (const line of [
      'HTTP/1.2 200 OK',
      'HTTP/2 200 OK',
      'http/1.1 200 OK',
      'HTTP/1.1 20 OK',
      'HTTP/1.1 2000 OK',
      'HTTP/1.1 2x0 OK',
      'HTTP/1.1  200 OK',
      'HTTP/1.1 200OK',
      'HTTP/1.1 200\tOK',
      'HTTP/1.1 200 O\x7fK',
      'HTTP/1.1 200 O\rK',
      'HTTP/1.1',
      '',
    ]) {
      expect(() => parse(line), JSON.stringify(line)).toThrow(HeadError);
    }
  });
});
