import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { hostnameOf } from '../shared/hostname.ts';
import type { RequestView } from './route.ts';

/** Headers that describe one connection, never forwarded (RFC 9110 7.6.1); upgrades add theirs back. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The client's address without the IPv4-mapped prefix. */
export function clientAddress(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/** The request came over TLS (the traffic TLS port; HTTP/2 requests too, through their session's socket). */
export function overTls(req: IncomingMessage): boolean {
  return 'encrypted' in req.socket;
}

/** What routing reads of a node:http request (the connections handed to node:http: upgrades, HTTP/1.0). */
export function incomingView(req: IncomingMessage): RequestView {
  const address = clientAddress(req);
  return {
    host: req.headers.host,
    hostname: hostnameOf(req.headers.host),
    target: req.url ?? '/',
    clientAddress: address,
    header: (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(name === 'cookie' ? '; ' : ', ') : value;
    },
  };
}

/**
 * The request headers an origin receives: the client's minus hop-by-hop ones (and those the client's
 * Connection header names), Host replaced by `hostOverride` (the origin's `header.Host`) when set, and the client's
 * address appended to X-Forwarded-For and given in CF-Connecting-IP, with X-Forwarded-Proto.
 */
export function upstreamRequestHeaders(
  req: IncomingMessage,
  hostOverride: string | undefined,
  client: string,
  proto: string,
  upgrade: boolean,
  extra?: { name: string; value: string },
): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  const incoming = req.headers;
  const named = connectionTokens(incoming);
  for (const name in incoming) {
    // HTTP/2's pseudo-headers (:method, :authority, ...) are the request line, not headers.
    if (HOP_BY_HOP.has(name) || (named && named.has(name)) || name.startsWith(':')) continue;
    headers[name] = incoming[name];
  }
  if (hostOverride) headers['host'] = hostOverride;
  if (extra) headers[extra.name] = extra.value;
  const previous = incoming['x-forwarded-for'];
  headers['x-forwarded-for'] = previous ? `${previous}, ${client}` : client;
  headers['x-forwarded-proto'] = proto;
  headers['cf-connecting-ip'] = client;
  if (upgrade) {
    headers['connection'] = 'Upgrade';
    headers['upgrade'] = incoming['upgrade'];
  }
  return headers;
}

/** The origin's response headers minus hop-by-hop ones (Node frames the body for the client itself). */
export function downstreamResponseHeaders(incoming: IncomingHttpHeaders): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  const named = connectionTokens(incoming);
  for (const name in incoming) {
    if (HOP_BY_HOP.has(name) || (named && named.has(name))) continue;
    headers[name] = incoming[name];
  }
  return headers;
}

function connectionTokens(headers: IncomingHttpHeaders): Set<string> | undefined {
  const connection = headers['connection'];
  if (!connection || connection === 'keep-alive' || connection === 'close') return undefined;
  return new Set(connection.split(',').map((token) => token.trim().toLowerCase()));
}

/** RFC 3986's host (a bracketed IPv6 address or a reg-name) and an optional port of at most five digits. */
const HOST_HEADER = /^(?:\[[0-9a-f:.]+\]|[a-z0-9\-._~!$&'()*+,;=%]+)(?::(\d{0,5}))?$/i;

/**
 * Whether a Host header is one a URL can be built from (RFC 9112 section 3.2: a server answers 400 to an
 * invalid one). A script's runtime builds `request.url` from it, so one like `a:1:2` must be refused before
 * the request reaches workerd, which could not hand it to the script.
 */
export function isValidHostHeader(host: string): boolean {
  const match = HOST_HEADER.exec(host);
  return match !== null && (match[1] === undefined || match[1] === '' || Number(match[1]) <= 65_535);
}
