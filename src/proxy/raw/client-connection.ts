import type { Socket } from 'node:net';
import { hostnameOf } from '../../shared/hostname.ts';
import { TrafficErrors, type ErrorAnswer } from '../error-answers.ts';
import type { ProxyDeps } from '../http-proxy.ts';
import { isErrorAnswer, type RequestView, type RouteResult } from '../route.ts';
import { BodyFramer, FramingError } from './body-framer.ts';
import { isBorrowed, owned, stopReadingIntoSharedBuffer } from './client-socket.ts';
import type { CoarseClock } from './coarse-clock.ts';
import { hasBareLineFeed, HeadError, headEnd, headerValue, parseRequestHead, type RequestHead } from './head-parser.ts';
import { errorResponse } from './heads.ts';
import { ProxyExchange, type ExchangeClient } from './proxy-exchange.ts';

/** Request heads above this are answered 431 (node:http's default bound, as before). */
export const MAX_REQUEST_HEAD_BYTES = 16 * 1024;
/** Bytes read ahead of the request being served (pipelining) before the client is paused. */
const MAX_READ_AHEAD = 64 * 1024;

const READING_HEAD = 0;
const ROUTING = 1;
const READING_BODY = 2;
const AWAITING_RESPONSE = 3;
const CLOSED = 4;

/** What a client connection needs from the listener. */
export interface ClientHost {
  deps: ProxyDeps;
  /** The listener's idle-timeout clock, moved by its sweep (the other stamps read `deps.clock`). */
  coarseClock: CoarseClock;
  /** Gives the connection to node:http (upgrades, HTTP/1.0, Expect), with the bytes not yet handled. */
  handOff(socket: Socket, unread: Buffer | undefined): void;
  /** Whether a request for this Host is served by the listener's host handler (public buckets) on node:http. */
  servedElsewhere(hostname: string, target: string): boolean;
  forget(connection: ClientConnection): void;
  /** The connections came over TLS (the traffic TLS port): X-Forwarded-Proto and cookie attributes. */
  https: boolean;
}

/**
 * One client connection of the raw data plane: reads request heads (strict parser, 16 KiB bound), routes
 * each, streams its body to the origin exchange, and serves requests one after another (keep-alive;
 * pipelined requests wait, read ahead by at most 64 KiB). Upgrades, HTTP/1.0, Expect: 100-continue and
 * hosts the listener's host handler claims (public buckets) go to node:http with the connection. The listener's sweep enforces the
 * headers, request and keep-alive timeouts from the fields below.
 */
export class ClientConnection implements ExchangeClient, RequestView {
  readonly socket: Socket;
  readonly clientAddress: string;
  readonly https: boolean;
  requestComplete = true;
  closeRequested = false;
  /** When the head being read started (ms; 0 = none): the headers timeout. */
  headStartedAt = 0;
  /** When the request whose body is being received started (ms; 0 = none): the request timeout. */
  requestStartedAt = 0;
  /** When the connection last became idle between requests (ms): the keep-alive timeout. */
  idleSince: number;
  /** When a byte last went either way (coarse ms): the idle timeout. */
  lastActive: number;
  /** Its place in the listener's list of connections. */
  listIndex = -1;
  readonly #host: ClientHost;
  #state = READING_HEAD;
  #buffer: Buffer | undefined;
  #scanFrom = 0;
  #request: RequestHead | undefined;
  /** The hostname of the request being served (hostnameOf its Host header). */
  #hostname = '';
  readonly #bodyFramer = new BodyFramer();
  #exchange: ProxyExchange | undefined;
  #readingHeads = false;
  /**
   * When the listener's sweep destroys the socket if it is still open (coarse ms; 0 = not closing): a
   * client that does not close its side after the last answer. The sweep rather than a timer per closed
   * connection, cleared as it closes.
   */
  destroyAt = 0;
  /** Given to node:http: reads (of a socket read with `onread`) become the socket's 'data' from now on. */
  #handedOff = false;
  /** This connection's socket listeners, removed at a hand-off (the socket's other listeners stay). */
  readonly #listeners: [string, (arg: unknown) => void][];

  /**
   * `adopted`: the socket reads with `onread` (raw/client-socket.ts) and calls `onRead` itself; otherwise
   * its 'data' events are read.
   */
  constructor(socket: Socket, host: ClientHost, adopted: boolean) {
    this.socket = socket;
    this.#host = host;
    this.idleSince = host.deps.clock.now();
    this.lastActive = host.coarseClock.now;
    this.https = host.https;
    const address = socket.remoteAddress ?? '';
    this.clientAddress = address.startsWith('::ffff:') ? address.slice(7) : address;
    // No setNoDelay here: the listener accepts with noDelay, and the TCP socket under a TLS socket or an
    // adopted handle is that one (a second setsockopt per connection otherwise).
    this.#listeners = [
      ['end', () => this.#onEnd()],
      ['error', () => socket.destroy()],
      ['drain', () => this.#exchange?.onClientDrain()],
      ['close', () => this.#onClose()],
    ];
    if (!adopted) this.#listeners.push(['data', (chunk) => this.onRead(chunk as Buffer)]);
    for (const [event, listener] of this.#listeners) socket.on(event, listener);
  }

  markActive(): void {
    this.lastActive = this.#host.coarseClock.now;
  }

  get idle(): boolean {
    return this.#state === READING_HEAD && this.#buffer === undefined;
  }

  // RequestView, for routing.
  get host(): string | undefined {
    return this.#request?.host;
  }

  get hostname(): string {
    return this.#hostname;
  }

  get target(): string {
    return this.#request?.target ?? '/';
  }

  header(name: string): string | undefined {
    return this.#request ? headerValue(this.#request, name, name === 'cookie' ? '; ' : ', ') : undefined;
  }

  finish(close: boolean): void {
    this.#exchange = undefined;
    if (this.#state === CLOSED) return;
    this.requestStartedAt = 0;
    if (close || this.closeRequested || !this.requestComplete) return this.#close();
    this.#state = READING_HEAD;
    this.#request = undefined;
    this.idleSince = this.#host.deps.clock.now();
    if (this.socket.isPaused()) this.socket.resume();
    if (this.#buffer && !this.#readingHeads) this.#readHeads();
  }

  answer(answer: ErrorAnswer): void {
    if (this.#state === CLOSED) return;
    const close = this.closeRequested || !this.requestComplete;
    this.socket.write(errorResponse(answer, close), 'latin1');
    this.finish(close);
  }

  abort(): void {
    this.#exchange = undefined;
    this.#state = CLOSED;
    this.socket.destroy();
  }

  resumeBody(): void {
    if (this.#state === READING_BODY && this.socket.isPaused()) this.socket.resume();
  }

  /** Answers a timeout (408) when nothing of a response was sent, then closes. */
  timedOut(): void {
    if (this.#exchange === undefined && this.#state !== CLOSED && this.socket.writable) {
      this.socket.end('HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      this.#state = CLOSED;
      this.headStartedAt = 0;
      this.requestStartedAt = 0;
      this.#destroyAfter(1_000);
    } else this.socket.destroy();
  }

  /**
   * Bytes from the client. They may lie in the shared read buffer (raw/client-socket.ts), valid until this
   * returns: what is kept past it is copied. False (after a hand-off) stops reading until node:http reads on.
   */
  onRead(chunk: Buffer): boolean {
    if (this.#handedOff) return this.socket.push(owned(chunk));
    this.#onData(chunk);
    if (this.#buffer !== undefined && isBorrowed(this.#buffer)) this.#buffer = Buffer.from(this.#buffer);
    return true;
  }

  #onData(chunk: Buffer): void {
    this.lastActive = this.#host.coarseClock.now;
    switch (this.#state) {
      case READING_BODY:
        return this.#forwardBody(chunk);
      case READING_HEAD:
        this.#buffer = this.#buffer ? Buffer.concat([this.#buffer, chunk]) : chunk;
        return this.#readHeads();
      case CLOSED:
        return;
      default:
        this.#buffer = this.#buffer ? Buffer.concat([this.#buffer, chunk]) : chunk;
        if (this.#buffer.length > MAX_READ_AHEAD) this.socket.pause();
    }
  }

  #readHeads(): void {
    this.#readingHeads = true;
    try {
      while (this.#state === READING_HEAD && this.#buffer && this.#readHead(this.#buffer));
    } finally {
      this.#readingHeads = false;
    }
  }

  /** Reads one request head from `buffer` and starts it; false when the head is not complete yet. */
  #readHead(buffer: Buffer): boolean {
    // Empty lines before a request line are ignored (RFC 9112 2.2), e.g. a CRLF after a body.
    let start = 0;
    while (start < buffer.length && (buffer[start] === 0x0d || buffer[start] === 0x0a)) start++;
    if (start === buffer.length) {
      this.#buffer = undefined;
      return false;
    }
    if (start > 0) {
      buffer = buffer.subarray(start);
      this.#buffer = buffer;
      this.#scanFrom = 0;
    }
    if (this.headStartedAt === 0) this.headStartedAt = this.#host.deps.clock.now();
    const end = headEnd(buffer, this.#scanFrom);
    if (end < 0 || end > MAX_REQUEST_HEAD_BYTES) {
      if (end > MAX_REQUEST_HEAD_BYTES || buffer.length > MAX_REQUEST_HEAD_BYTES) {
        this.#refuse('431 Request Header Fields Too Large');
        return false;
      }
      if (hasBareLineFeed(buffer, this.#scanFrom)) {
        this.#refuse('400 Bad Request');
        return false;
      }
      // Wait for the rest of the head; the next scan starts where this one could still match.
      this.#scanFrom = Math.max(0, buffer.length - 3);
      return false;
    }
    let request: RequestHead;
    try {
      request = parseRequestHead(buffer, 0, end);
    } catch (error) {
      if (!(error instanceof HeadError)) throw error;
      this.#refuse('400 Bad Request');
      return false;
    }
    this.#scanFrom = 0;
    const hostname = hostnameOf(request.host);
    if (
      request.upgrade ||
      request.minor === 0 ||
      request.expect ||
      this.#host.servedElsewhere(hostname, request.target)
    ) {
      this.#handOff();
      return false;
    }
    this.#buffer = end < buffer.length ? buffer.subarray(end) : undefined;
    this.headStartedAt = 0;
    this.#request = request;
    this.#hostname = hostname;
    this.closeRequested = request.close;
    this.requestComplete = request.body === 'none';
    // The request timeout bounds receiving the request (as node:http's), not a long answer to it.
    this.requestStartedAt = this.requestComplete ? 0 : this.#host.deps.clock.now();
    if (request.body === 'length') this.#bodyFramer.length(request.contentLength);
    else if (request.body === 'chunked') this.#bodyFramer.chunked();
    this.#state = ROUTING;
    // (As route.ts's whenRouted, without its three closures per request.)
    let route: RouteResult | Promise<RouteResult>;
    try {
      route = this.#host.deps.route(this, this.https);
    } catch (error) {
      this.#routingFailed(request, error);
      return true;
    }
    if (route instanceof Promise) {
      route.then(
        (routed) => this.#routed(request, routed),
        (error: unknown) => this.#routingFailed(request, error),
      );
    } else this.#routed(request, route);
    return true;
  }

  #routingFailed(request: RequestHead, error: unknown): void {
    this.#host.deps.logger.error('load balancer routing failed', { host: request.host, err: error });
    if (this.#request === request) this.answer(TrafficErrors.internal());
  }

  #routed(request: RequestHead, route: RouteResult): void {
    if (this.#state !== ROUTING || this.#request !== request) return;
    if (isErrorAnswer(route)) return this.answer(route);
    const exchange = new ProxyExchange(this.#host.deps, this, request, route);
    this.#exchange = exchange;
    this.#state = this.requestComplete ? AWAITING_RESPONSE : READING_BODY;
    exchange.start();
    if (this.#state === READING_BODY && this.#buffer) {
      const buffered = this.#buffer;
      this.#buffer = undefined;
      this.#forwardBody(buffered);
    }
    if (this.#state !== CLOSED && this.socket.isPaused() && this.#exchange) this.socket.resume();
  }

  #forwardBody(chunk: Buffer): void {
    let taken: number;
    try {
      taken = this.#bodyFramer.consume(chunk, 0);
    } catch (error) {
      if (!(error instanceof FramingError)) throw error;
      this.#exchange?.cancel();
      return this.abort();
    }
    const exchange = this.#exchange;
    if (taken > 0 && exchange) {
      // A write the kernel does not take at once keeps its bytes: they must not be in the shared read buffer.
      const flowing = exchange.sendBody(owned(taken === chunk.length ? chunk : chunk.subarray(0, taken)));
      if (!flowing) this.socket.pause();
    }
    if (!this.#bodyFramer.done) return;
    this.requestComplete = true;
    this.requestStartedAt = 0;
    if (this.#state === READING_BODY) this.#state = AWAITING_RESPONSE;
    if (taken < chunk.length) {
      const rest = chunk.subarray(taken);
      this.#buffer = this.#buffer ? Buffer.concat([this.#buffer, rest]) : rest;
    }
  }

  #onEnd(): void {
    // The client sent all it will send: finish the exchange in progress (if its request is whole), then close.
    if (this.#state === READING_HEAD && this.#exchange === undefined) return void this.socket.destroy();
    if (!this.requestComplete) {
      this.#exchange?.cancel();
      return this.abort();
    }
    this.closeRequested = true;
  }

  /** Has the listener's sweep destroy the socket if it is still open `ms` from now (the first call counts). */
  #destroyAfter(ms: number): void {
    if (this.destroyAt === 0) this.destroyAt = this.#host.coarseClock.now + ms;
  }

  #onClose(): void {
    this.#state = CLOSED;
    this.#exchange?.cancel();
    this.#exchange = undefined;
    this.#host.forget(this);
    // Node's own objects of a closed socket (its handle's wrappers) can outlive it through young-generation
    // collections, up to the next full one: what the socket still points to lives on with them. So the
    // socket lets go of this connection, and this connection of what it read.
    this.#removeListeners();
    stopReadingIntoSharedBuffer(this.socket);
    this.#request = undefined;
    this.#buffer = undefined;
  }

  #close(): void {
    this.#state = CLOSED;
    this.#buffer = undefined;
    this.socket.end();
    // A client that does not close its side in time is cut off.
    this.#destroyAfter(5_000);
  }

  #refuse(status: string): void {
    this.#state = CLOSED;
    this.#buffer = undefined;
    if (this.socket.writable) this.socket.end(`HTTP/1.1 ${status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    this.#destroyAfter(1_000);
  }

  #handOff(): void {
    const unread = this.#buffer && owned(this.#buffer);
    this.#buffer = undefined;
    this.#state = CLOSED;
    this.#handedOff = true;
    this.#removeListeners();
    this.#host.forget(this);
    this.#host.handOff(this.socket, unread);
  }

  /** Takes this connection's listeners off its socket (the socket's other listeners stay). */
  #removeListeners(): void {
    for (const [event, listener] of this.#listeners) this.socket.off(event, listener);
  }
}
