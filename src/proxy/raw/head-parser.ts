import { HOP_BY_HOP } from '../forwarded-headers.ts';

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

/**
 * A response head, read only as far as relaying it needs: the status, the framing, and where the lines
 * the client must not get are. Other header lines are never split into names and values: they are
 * relayed as slices of `text` (see heads.ts), which for a typical answer (8-10 lines, 2 of them framing
 * or hop-by-hop) skips most of the strings a full parse made (3.3 -> ~1 us per head on the benchmark
 * machine).
 */
export interface ResponseHead {
  status: number;
  reason: string;
  minor: number;
  /** 'length' or 'chunked' as sent, 'close' when neither (the body runs to the end of the connection). */
  framing: BodyKind;
  contentLength: number;
  close: boolean;
  connectionTokens: string[] | undefined;
  /** The head as latin1 text, without its final CRLFCRLF. */
  text: string;
  /** Where the header lines start in `text` (after the status line's CRLF). */
  fieldsStart: number;
  /**
   * The lines relaying may drop, as triples: start in `text`, end (after the line's CRLF; past the end of
   * `text` for the last line) and kind (`TE_LINE`, `LENGTH_LINE` or `HOP_LINE`), in order.
   */
  lines: number[];
}

/** A Transfer-Encoding line: relayed only with a chunked body that is sent. */
export const TE_LINE = 1;
/** A Content-Length line: dropped when the body is chunked (RFC 9112 6.3). */
export const LENGTH_LINE = 2;
/** A hop-by-hop line, or one the Connection header names: never relayed. */
export const HOP_LINE = 3;

export class HeadError extends Error {}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const REQUEST_TARGET = /^[\x21-\x7e\x80-\xff]+$/;
const DIGITS = /^\d{1,15}$/;

const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');

/** Where the head starting at `from` ends (the index after CRLFCRLF), scanning from `scanFrom`; -1 if not yet. */
export function headEnd(buffer: Buffer, scanFrom: number): number {
  // A Buffer needle: a string one is converted on each call.
  const at = buffer.indexOf(HEAD_END, scanFrom);
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

/*
 * Header lines are checked byte by byte as they are split (colonAt, lineEndAt): each line a token name, a
 * colon and a value of visible characters, spaces, tabs and obs-text (RFC 9110 5.5), lines separated by
 * CRLF. So control characters, CR or LF outside a CRLF pair, a space before the colon, folded lines and
 * lines without a colon are refused. One pass over the bytes with two tables: measured 2.2 -> 1.1 us per
 * nginx response head against a regular expression over the head's text followed by a second pass to split it.
 */
/** Bytes of a token (a header name). */
const TOKEN_BYTES = byteClass("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
/** Bytes of a field value: tab, space, visible characters, obs-text. */
const FIELD_BYTES = byteClass('\t', [0x20, 0x7e], [0x80, 0xff]);

function byteClass(characters: string, ...ranges: [number, number][]): Uint8Array {
  const table = new Uint8Array(256);
  for (const character of characters) table[character.charCodeAt(0)] = 1;
  for (const [from, to] of ranges) table.fill(1, from, to + 1);
  return table;
}

/** Where the first line of `text` ends (its CRLF, or the end of `text`). */
function firstLineEnd(text: string): number {
  const at = text.indexOf('\r\n');
  return at < 0 ? text.length : at;
}

/**
 * The status of a status line `HTTP/1.0` or `HTTP/1.1`, a space, three digits, then nothing or a space and a
 * reason of field characters (tabs, visible characters, obs-text): the first `lineEnd` characters of `text`
 * (a head as latin1). Else a HeadError. Read character by character: no regular expression, no slice.
 */
function statusOf(text: string, lineEnd: number): number {
  const minor = text.charCodeAt(7);
  if (lineEnd < 12 || !text.startsWith('HTTP/1.') || (minor !== 0x30 && minor !== 0x31) || text[8] !== ' ') {
    throw new HeadError('malformed status line');
  }
  let status = 0;
  for (let i = 9; i < 12; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) throw new HeadError('malformed status line');
    status = status * 10 + digit;
  }
  if (lineEnd > 12 && text[12] !== ' ') throw new HeadError('malformed status line');
  for (let i = 13; i < lineEnd; i++) {
    if (FIELD_BYTES[text.charCodeAt(i)] !== 1) throw new HeadError('malformed status line');
  }
  return status;
}

/** The value of the header line whose colon is at `colon` and which ends at `end`, without surrounding spaces. */
function fieldValue(text: string, colon: number, end: number): string {
  let from = colon + 1;
  while (from < end && isSpace(text.charCodeAt(from))) from++;
  while (end > from && isSpace(text.charCodeAt(end - 1))) end--;
  return text.slice(from, end);
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

export function parseRequestHead(buffer: Buffer, start: number, end: number): RequestHead {
  const text = buffer.toString('latin1', start, end - 4);
  const lineEnd = firstLineEnd(text);
  // (The request line's parts are checked below: none of their expressions allows a control character.)
  const requestLine = text.slice(0, lineEnd);
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
  readFields(buffer, start, text, lineEnd + 2, head);
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

/** Header names whose lines a response relay may drop, by length: other lines are never read by name. */
const DROPPABLE_BY_LENGTH: (string[] | undefined)[] = [];
for (const name of [...HOP_BY_HOP, 'content-length']) (DROPPABLE_BY_LENGTH[name.length] ??= []).push(name);

/**
 * The droppable name (lowercase) that the header name at `from` of `buffer`, `length` bytes long, is in any
 * letter case; undefined for any other name. Compared byte by byte: no string is made of the name.
 */
function droppableName(buffer: Buffer, from: number, length: number): string | undefined {
  const candidates = DROPPABLE_BY_LENGTH[length];
  if (candidates === undefined) return undefined;
  for (const candidate of candidates) {
    let i = 0;
    // (Names are tokens: setting bit 0x20 lowercases a letter and leaves '-' as it is.)
    while (i < length && (buffer[from + i]! | 0x20) === candidate.charCodeAt(i)) i++;
    if (i === length) return candidate;
  }
  return undefined;
}

export function parseResponseHead(buffer: Buffer, start: number, end: number): ResponseHead {
  const stop = end - 4;
  const text = buffer.toString('latin1', start, stop);
  const lineEnd = firstLineEnd(text);
  const status = statusOf(text, lineEnd);
  const fieldsStart = lineEnd + 2;
  const minor = text.charCodeAt(7) - 0x30;
  const head: ResponseHead = {
    status,
    reason: lineEnd > 13 ? text.slice(13, lineEnd) : '',
    minor,
    framing: 'close',
    contentLength: 0,
    close: minor === 0,
    connectionTokens: undefined,
    text,
    fieldsStart,
    lines: [],
  };
  let contentLength: string | undefined;
  let chunked = false;
  let transferEncoding = false;
  const { lines } = head;
  const length = text.length;
  // Each header line is checked and split in one pass over its bytes (colonAt, lineEndAt).
  for (let at = fieldsStart; at < length;) {
    const colon = colonAt(buffer, start, stop, at);
    const next = lineEndAt(buffer, start, stop, colon);
    const name = droppableName(buffer, start + at, colon - at);
    if (name !== undefined) {
      if (name === 'content-length') {
        const value = fieldValue(text, colon, next);
        if (contentLength !== undefined && contentLength !== value) throw new HeadError('conflicting Content-Length');
        contentLength = value;
        lines.push(at, next + 2, LENGTH_LINE);
      } else if (name === 'transfer-encoding') {
        // The last coding decides: chunked is delimited, anything else runs to the end of the connection.
        transferEncoding = true;
        chunked = /(?:^|,)\s*chunked\s*$/i.test(fieldValue(text, colon, next));
        if (!chunked) head.close = true;
        lines.push(at, next + 2, TE_LINE);
      } else {
        // (Any other droppable name is hop-by-hop.)
        if (name === 'connection') readConnection(fieldValue(text, colon, next), head);
        lines.push(at, next + 2, HOP_LINE);
      }
    }
    at = next + 2;
  }
  if (head.connectionTokens) markConnectionTokens(head);
  if (chunked) head.framing = 'chunked';
  else if (contentLength !== undefined && !transferEncoding) {
    if (!DIGITS.test(contentLength)) throw new HeadError('invalid Content-Length');
    head.framing = 'length';
    head.contentLength = Number(contentLength);
  }
  if (head.framing === 'close') head.close = true;
  return head;
}

/** The lines the response's Connection header names are hop-by-hop too (rare: every name is read). */
function markConnectionTokens(head: ResponseHead): void {
  const { text, lines } = head;
  const tokens = head.connectionTokens!;
  const marked: number[] = [];
  let next = 0;
  for (let at = head.fieldsStart; at < text.length;) {
    const colon = text.indexOf(':', at);
    let end = text.indexOf('\r\n', colon);
    if (end < 0) end = text.length;
    if (next < lines.length && lines[next] === at) {
      marked.push(lines[next]!, lines[next + 1]!, lines[next + 2]!);
      next += 3;
    } else if (tokens.includes(text.slice(at, colon).toLowerCase())) marked.push(at, end + 2, HOP_LINE);
    at = end + 2;
  }
  head.lines = marked;
}

/**
 * The header lines of a request head (`text`: its bytes from `start` of `buffer` as latin1, final CRLFCRLF
 * excluded), from `from` to the end, checked and split in one pass over their bytes (see `lineEndAt`) into
 * `list`: names as sent and lowercased, values without surrounding spaces.
 */
function readFields(buffer: Buffer, start: number, text: string, from: number, list: HeaderList): void {
  const length = text.length;
  for (let at = from; at < length;) {
    const colon = colonAt(buffer, start, start + length, at);
    const next = lineEndAt(buffer, start, start + length, colon);
    const rawName = text.slice(at, colon);
    list.rawNames.push(rawName);
    list.names.push(hasUppercase(buffer, start + at, start + colon) ? rawName.toLowerCase() : rawName);
    list.values.push(fieldValue(text, colon, next));
    at = next + 2;
  }
}

/**
 * Where the colon of the header line at `at` is (offsets from `start` of `buffer`; the head's lines end
 * before `stop`): after a token of at least one byte (TOKEN_BYTES), else a HeadError.
 */
function colonAt(buffer: Buffer, start: number, stop: number, at: number): number {
  let i = start + at;
  while (i < stop && TOKEN_BYTES[buffer[i]!] === 1) i++;
  if (i === start + at || i === stop || buffer[i] !== 0x3a) throw new HeadError('malformed header line');
  return i - start;
}

/**
 * Where the header line whose colon is at `colon` ends: its value is field characters
 * (FIELD_BYTES) up to a CRLF followed by another line, or up to the end of the head; else a HeadError.
 */
function lineEndAt(buffer: Buffer, start: number, stop: number, colon: number): number {
  let i = start + colon + 1;
  while (i < stop && FIELD_BYTES[buffer[i]!] === 1) i++;
  if (i < stop && (buffer[i] !== 0x0d || buffer[i + 1] !== 0x0a || i + 2 >= stop)) {
    throw new HeadError('malformed header line');
  }
  return i - start;
}

function hasUppercase(buffer: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (buffer[i]! >= 0x41 && buffer[i]! <= 0x5a) return true;
  return false;
}

function readConnection(value: string, head: { close: boolean; connectionTokens: string[] | undefined }): void {
  // Nearly every message names one of the two (no list to split, no token to lowercase).
  if (equalsLowercase(value, 'keep-alive')) return void (head.close = false);
  if (equalsLowercase(value, 'close')) return void (head.close = true);
  for (const part of value.split(',')) {
    const token = part.trim().toLowerCase();
    if (token === 'close') head.close = true;
    else if (token === 'keep-alive') head.close = false;
    else if (token !== '') (head.connectionTokens ??= []).push(token);
  }
}

/** Whether `text` is `lowercase` in any letter case (`lowercase`: lowercase letters and '-' only). */
function equalsLowercase(text: string, lowercase: string): boolean {
  if (text.length !== lowercase.length) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const expected = lowercase.charCodeAt(i);
    if (code !== expected && !(expected >= 0x61 && expected <= 0x7a && (code | 0x20) === expected)) return false;
  }
  return true;
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
