import { STATUS_CODES } from 'node:http';
import { errorBody, type ErrorAnswer } from '../error-answers.ts';
import { HOP_BY_HOP } from '../forwarded-headers.ts';
import { LENGTH_LINE, TE_LINE, type RequestHead, type ResponseHead } from './head-parser.ts';

/**
 * The request head an origin receives, as one latin1 string (written with one socket write): the
 * client's header lines in their order and spelling, minus hop-by-hop ones and those the client's
 * Connection header names; Host replaced by the origin's `header.Host` override when set; the client's
 * address appended to X-Forwarded-For and given in CF-Connecting-IP, with X-Forwarded-Proto. A chunked
 * body is relayed as it came, so its Transfer-Encoding line is kept. The origin connection is kept alive
 * (HTTP/1.1's default), whatever the client asked for its own.
 */
export function upstreamHead(
  request: RequestHead,
  hostOverride: string | undefined,
  client: string,
  https: boolean,
  extra?: { readonly name: string; readonly value: string },
): string {
  let head = `${request.method} ${request.target} HTTP/1.1\r\n`;
  let forwardedFor: string | undefined;
  const { names, rawNames, values, connectionTokens } = request;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    switch (name) {
      case 'x-forwarded-for':
        forwardedFor = forwardedFor === undefined ? values[i] : `${forwardedFor}, ${values[i]}`;
        continue;
      case 'x-forwarded-proto':
      case 'cf-connecting-ip':
        continue;
      case 'host':
        if (hostOverride) continue;
        break;
      case 'transfer-encoding':
        break;
      default:
        if (HOP_BY_HOP.has(name) || connectionTokens?.includes(name) || name === extra?.name) continue;
    }
    head += `${rawNames[i]}: ${values[i]}\r\n`;
  }
  if (hostOverride) head += `host: ${hostOverride}\r\n`;
  if (extra) head += `${extra.name}: ${extra.value}\r\n`;
  head += `x-forwarded-for: ${forwardedFor ? `${forwardedFor}, ${client}` : client}\r\n`;
  return `${head}x-forwarded-proto: ${https ? 'https' : 'http'}\r\ncf-connecting-ip: ${client}\r\n\r\n`;
}

/**
 * The response head the client receives: the origin's status and header lines minus hop-by-hop ones,
 * with the framing the relayed body actually has (Content-Length, or Transfer-Encoding: chunked, or
 * neither and Connection: close for a body that runs to the end of the origin connection), an extra
 * Set-Cookie for a new affinity session, and Connection: close when this client connection ends after it.
 * The lines kept are relayed as the origin sent them: runs of the head's text between dropped lines.
 */
export function downstreamHead(
  response: ResponseHead,
  hasBody: boolean,
  setCookie: string | undefined,
  close: boolean,
): string {
  let head = statusLine(response);
  const { text, lines } = response;
  let from = response.fieldsStart;
  for (let i = 0; i < lines.length; i += 3) {
    if (keepsLine(response, lines[i + 2]!, hasBody)) continue;
    const start = lines[i]!;
    if (start > from) head += text.slice(from, start);
    from = lines[i + 1]!;
  }
  // The head's last line has no CRLF in `text`.
  if (from < text.length) head += `${text.slice(from)}\r\n`;
  return `${head}${addedLines(setCookie, close)}\r\n`;
}

/**
 * Whether a droppable line of this kind is relayed all the same: only a chunked body keeps its coding line (a
 * body until close is relayed plain); chunked framing wins over a Content-Length sent with it (RFC 9112 6.3),
 * while HEAD and 304 answers keep theirs.
 */
function keepsLine(response: ResponseHead, kind: number, hasBody: boolean): boolean {
  const chunked = response.framing === 'chunked';
  return kind === TE_LINE ? chunked && hasBody : kind === LENGTH_LINE && !chunked;
}

/** The lines the relay adds at the end of the head: the affinity cookie, the close of this connection. */
function addedLines(setCookie: string | undefined, close: boolean): string {
  const cookie = setCookie ? `set-cookie: ${setCookie}\r\n` : '';
  return close ? `${cookie}connection: close\r\n` : cookie;
}

/**
 * What `downstreamHead` gives, followed by the body bytes the same read brought, as one buffer for one write.
 * `buffer` holds the origin's head from offset 0 (as parsed) and then the body up to `bodyEnd`. The kept
 * lines are copied from the origin's bytes in runs (the status line too when it already reads as the one
 * `downstreamHead` writes): no string is made of the head and only added lines are encoded. With no line
 * added, the last run goes on through the blank line and the body.
 */
export function downstreamResponse(
  response: ResponseHead,
  hasBody: boolean,
  setCookie: string | undefined,
  close: boolean,
  buffer: Buffer,
  bodyEnd: number,
): Buffer {
  const { text, lines } = response;
  // (A status below 100, e.g. `012`, would not read back the same.)
  const status = response.minor === 1 && response.reason !== '' && response.status >= 100 ? '' : statusLine(response);
  const added = addedLines(setCookie, close);
  // The kept runs of the origin's head as [from, to) offsets; then the rest of the head from `from`.
  const runs: number[] = [];
  let from = status === '' ? 0 : response.fieldsStart;
  let size = status.length + added.length;
  for (let i = 0; i < lines.length; i += 3) {
    if (keepsLine(response, lines[i + 2]!, hasBody)) continue;
    const start = lines[i]!;
    if (start > from) {
      runs.push(from, start);
      size += start - from;
    }
    from = lines[i + 1]!;
  }
  // Where the blank line that ends the head starts (the last line's CRLF comes before it).
  const blankLine = text.length + 2;
  size += bodyEnd - from;
  const out = Buffer.allocUnsafe(size);
  let at = status === '' ? 0 : out.write(status, 0, 'latin1');
  for (let i = 0; i < runs.length; i += 2) at += buffer.copy(out, at, runs[i]!, runs[i + 1]!);
  if (added === '') {
    buffer.copy(out, at, from, bodyEnd);
    return out;
  }
  if (from < blankLine) at += buffer.copy(out, at, from, blankLine);
  at += out.write(added, at, 'latin1');
  buffer.copy(out, at, Math.max(from, blankLine), bodyEnd);
  return out;
}

function statusLine(response: ResponseHead): string {
  return `HTTP/1.1 ${response.status} ${response.reason || STATUS_CODES[response.status] || ''}\r\n`;
}

/** One of the data plane's own answers (Cloudflare's shape) as HTTP/1.1 head and body, to write as latin1. */
export function errorResponse(answer: ErrorAnswer, close: boolean): string {
  const body = errorBody(answer);
  return (
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Error'}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
    `content-length: ${Buffer.byteLength(body, 'latin1')}\r\ncache-control: no-store\r\n${close ? 'connection: close\r\n' : ''}\r\n${body}`
  );
}
