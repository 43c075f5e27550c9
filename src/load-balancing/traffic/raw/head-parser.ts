/**
 * A strict, small HTTP/1.1 head parser for the raw data plane: request heads from clients and response
 * heads from origins. Heads are decoded as latin1 so every byte round-trips unchanged when re-encoded.
 * Anything ambiguous is refused rather than guessed (a proxy that reads a head differently from the
 * server behind it opens the door to request smuggling): bare LF line ends, folded lines, spaces before
 * the colon, control characters, conflicting Content-Length, Transfer-Encoding together with
 * Content-Length on a request, a request Transfer-Encoding other than chunked.
 */

/** One header list: names lowercased (for lookups) and as sent (forwarded as is), values trimmed. */
export interface HeaderList {
  names: string[];
  rawNames: string[];
  values: string[];
}

/** How the body after a head is delimited. */
export type BodyKind = 'none' | 'length' | 'chunked' | 'close';

export interface RequestHead extends HeaderList {
  method: string;
  target: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: number;
  body: BodyKind;
  /** With body 'length'. */
  contentLength: number;
  /** The client asked to close after this exchange (Connection: close, or HTTP/1.0 without keep-alive). */
  close: boolean;
  /** Lowercased tokens of the Connection header other than close/keep-alive (hop-by-hop by name). */
  connectionTokens: string[] | undefined;
  host: string | undefined;
  upgrade: boolean;
  expect: boolean;
}

export interface ResponseHead extends HeaderList {
  status: number;
  reason: string;
  minor: number;
  /** 'length' or 'chunked' as sent, 'close' when neither (the body runs to the end of the connection). */
  framing: BodyKind;
  contentLength: number;
  close: boolean;
  connectionTokens: string[] | undefined;
}

export class HeadError extends Error {}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * Anywhere in a head: control characters other than HTAB, and CR or LF outside a CRLF pair. One scan of
 * the whole head instead of one per field value (field values are then visible characters, spaces,
 * tabs and obs-text, as RFC 9110 5.5 allows).
 */
// eslint-disable-next-line no-control-regex -- finding control characters is this expression's job
const FORBIDDEN = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)|(?<!\r)\n/;
const REQUEST_TARGET = /^[\x21-\x7e\x80-\xff]+$/;
const DIGITS = /^\d{1,15}$/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: ([\t\x20-\x7e\x80-\xff]*))?$/;

/** Where the head starting at `from` ends (the index after CRLFCRLF), scanning from `scanFrom`; -1 if not yet. */
export function headEnd(buffer: Buffer, scanFrom: number): number {
  const at = buffer.indexOf('\r\n\r\n', scanFrom, 'latin1');
  return at < 0 ? -1 : at + 4;
}

/**
 * Whether an incomplete head has a line ended by LF alone: such a head would never end with CRLFCRLF,
 * so it is refused at once instead of waiting for the headers timeout. Scans from `from` (what an
 * earlier call has not seen), so a head that trickles in is not rescanned from its start each time.
 */
export function hasBareLineFeed(buffer: Buffer, from: number): boolean {
  for (let at = buffer.indexOf(0x0a, from); at >= 0; at = buffer.indexOf(0x0a, at + 1)) {
    if (at === 0 || buffer[at - 1] !== 0x0d) return true;
  }
  return false;
}

export function parseRequestHead(buffer: Buffer, start: number, end: number): RequestHead {
  const text = buffer.toString('latin1', start, end - 4);
  if (FORBIDDEN.test(text)) throw new HeadError('control character in the head');
  const lineEnd = text.indexOf('\r\n');
  const requestLine = lineEnd < 0 ? text : text.slice(0, lineEnd);
  const firstSpace = requestLine.indexOf(' ');
  const lastSpace = requestLine.lastIndexOf(' ');
  if (firstSpace <= 0 || lastSpace === firstSpace) throw new HeadError('malformed request line');
  const method = requestLine.slice(0, firstSpace);
  const target = requestLine.slice(firstSpace + 1, lastSpace);
  const version = requestLine.slice(lastSpace + 1);
  if (!TOKEN.test(method) || !REQUEST_TARGET.test(target)) throw new HeadError('malformed request line');
  let minor: number;
  if (version === 'HTTP/1.1') minor = 1;
  else if (version === 'HTTP/1.0') minor = 0;
  else throw new HeadError('unsupported HTTP version');
  const head: RequestHead = {
    method,
    target,
    minor,
    names: [],
    rawNames: [],
    values: [],
    body: 'none',
    contentLength: 0,
    close: minor === 0,
    connectionTokens: undefined,
    host: undefined,
    upgrade: false,
    expect: false,
  };
  parseFields(text, lineEnd < 0 ? text.length : lineEnd + 2, head);
  let transferEncoding: string | undefined;
  let contentLength: string | undefined;
  let hosts = 0;
  const { names, values } = head;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const value = values[i]!;
    switch (name) {
      case 'host':
        hosts++;
        head.host = value;
        break;
      case 'content-length':
        if (contentLength !== undefined && contentLength !== value) throw new HeadError('conflicting Content-Length');
        contentLength = value;
        break;
      case 'transfer-encoding':
        transferEncoding = transferEncoding === undefined ? value : `${transferEncoding}, ${value}`;
        break;
      case 'connection':
        readConnection(value, head);
        break;
      case 'upgrade':
        head.upgrade = true;
        break;
      case 'expect':
        head.expect = true;
        break;
    }
  }
  if (hosts > 1 || (minor === 1 && hosts === 0)) throw new HeadError('a request needs exactly one Host header');
  if (transferEncoding !== undefined) {
    if (contentLength !== undefined) throw new HeadError('Transfer-Encoding with Content-Length');
    if (transferEncoding.trim().toLowerCase() !== 'chunked') throw new HeadError('unsupported Transfer-Encoding');
    head.body = 'chunked';
  } else if (contentLength !== undefined) {
    if (!DIGITS.test(contentLength)) throw new HeadError('invalid Content-Length');
    head.contentLength = Number(contentLength);
    head.body = head.contentLength > 0 ? 'length' : 'none';
  }
  return head;
}

export function parseResponseHead(buffer: Buffer, start: number, end: number): ResponseHead {
  const text = buffer.toString('latin1', start, end - 4);
  if (FORBIDDEN.test(text)) throw new HeadError('control character in the head');
  const lineEnd = text.indexOf('\r\n');
  const statusLine = STATUS_LINE.exec(lineEnd < 0 ? text : text.slice(0, lineEnd));
  if (!statusLine) throw new HeadError('malformed status line');
  const minor = Number(statusLine[1]);
  const head: ResponseHead = {
    status: Number(statusLine[2]),
    reason: statusLine[3] ?? '',
    minor,
    names: [],
    rawNames: [],
    values: [],
    framing: 'close',
    contentLength: 0,
    close: minor === 0,
    connectionTokens: undefined,
  };
  parseFields(text, lineEnd < 0 ? text.length : lineEnd + 2, head);
  let contentLength: string | undefined;
  let chunked = false;
  const { names, values } = head;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (name === 'content-length') {
      const value = values[i]!;
      if (contentLength !== undefined && contentLength !== value) throw new HeadError('conflicting Content-Length');
      contentLength = value;
    } else if (name === 'transfer-encoding') {
      // The last coding decides: chunked is delimited, anything else runs to the end of the connection.
      chunked = /(?:^|,)\s*chunked\s*$/i.test(values[i]!);
      if (!chunked) head.close = true;
    } else if (name === 'connection') {
      readConnection(values[i]!, head);
    }
  }
  if (chunked) head.framing = 'chunked';
  else if (contentLength !== undefined && !head.names.includes('transfer-encoding')) {
    if (!DIGITS.test(contentLength)) throw new HeadError('invalid Content-Length');
    head.framing = 'length';
    head.contentLength = Number(contentLength);
  }
  if (head.framing === 'close') head.close = true;
  return head;
}

/** Header lines from `from` to the end of `text` (which excludes the final CRLFCRLF). */
function parseFields(text: string, from: number, list: HeaderList): void {
  let at = from;
  while (at < text.length) {
    let next = text.indexOf('\r\n', at);
    if (next < 0) next = text.length;
    const colon = text.indexOf(':', at);
    if (colon < 0 || colon > next) throw new HeadError('malformed header line');
    const rawName = text.slice(at, colon);
    if (!TOKEN.test(rawName)) throw new HeadError('invalid header name');
    const value = text.slice(colon + 1, next).trim();
    list.rawNames.push(rawName);
    list.names.push(rawName.toLowerCase());
    list.values.push(value);
    at = next + 2;
  }
}

function readConnection(value: string, head: { close: boolean; connectionTokens: string[] | undefined }): void {
  for (const part of value.split(',')) {
    const token = part.trim().toLowerCase();
    if (token === 'close') head.close = true;
    else if (token === 'keep-alive') head.close = false;
    else if (token !== '') (head.connectionTokens ??= []).push(token);
  }
}

/** The first value of a header (lowercase name), or all of them joined as HTTP allows. */
export function headerValue(list: HeaderList, name: string, separator = ', '): string | undefined {
  let found: string | undefined;
  const { names, values } = list;
  for (let i = 0; i < names.length; i++) {
    if (names[i] === name) found = found === undefined ? values[i] : `${found}${separator}${values[i]}`;
  }
  return found;
}
