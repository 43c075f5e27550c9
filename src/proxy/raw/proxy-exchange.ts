import type { Socket } from 'node:net';
import type { ErrorAnswer } from '../error-answers.ts';
import { TrafficErrors } from '../error-answers.ts';
import type { ProxyDeps } from '../http-proxy.ts';
import type { ProxyRoute as Route, ProxyTarget as Target } from '../route.ts';
import { classify, egressRefuses, type UpstreamFailure } from '../upstream.ts';
import { BodyFramer, FramingError } from './body-framer.ts';
import {
  hasBareLineFeed,
  HeadError,
  headEnd,
  parseResponseHead,
  type RequestHead,
  type ResponseHead,
} from './head-parser.ts';
import { downstreamHead, downstreamResponse, upstreamHead } from './heads.ts';
import { OriginConnection, ownedOriginBytes, returnIdle, takeIdle, type OriginUser } from './origin-connection.ts';

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
/** A response's first body bytes up to this size are copied behind its head and sent in one write. */
const COALESCE_BYTES = 64 * 1024;

/** The client side of an exchange (raw/client-connection.ts). */
export interface ExchangeClient {
  readonly socket: Socket;
  readonly clientAddress: string;
  /** A byte went out: stamps the connection with the idle timeout's coarse clock. */
  markActive(): void;
  /** The client came over TLS (X-Forwarded-Proto). */
  readonly https: boolean;
  /** The request body was received in full (or there was none). */
  readonly requestComplete: boolean;
  /** The client asked to close after this exchange. */
  readonly closeRequested: boolean;
  /** The response was written in full; `close` ends the client connection after it. */
  finish(close: boolean): void;
  /** Answer with one of the data plane's errors instead of a response. */
  answer(answer: ErrorAnswer): void;
  /** The response broke off mid-way: the client must see a broken response, not a short one. */
  abort(): void;
  /** The origin took the request body bytes it was given: read on. */
  resumeBody(): void;
}

const AWAITING_HEAD = 0;
const RELAYING_BODY = 1;
const DONE = 2;

/**
 * One proxied request: sends the request head (and the body the client streams) to an origin over a
 * pooled connection, reads the response head with the data plane's deadlines and size bound, and relays
 * the response to the client byte for byte. A connection failure before any answer is retried once on
 * another origin for an idempotent request without a body (and once more on a new connection to the
 * same origin when a kept-alive connection turned out to be closed); otherwise Cloudflare's error answer.
 */
export class ProxyExchange implements OriginUser {
  readonly #deps: ProxyDeps;
  readonly #client: ExchangeClient;
  readonly #request: RequestHead;
  readonly #route: Route;
  readonly #retryable: boolean;
  #mayRetry: boolean;
  #target: Target;
  #origin: OriginConnection | undefined;
  #state = AWAITING_HEAD;
  #head: Buffer | undefined;
  readonly #framer = new BodyFramer();
  #response: ResponseHead | undefined;
  #held = false;
  #staleRetried = false;
  #closeClient = false;
  #originReusable = true;

  constructor(deps: ProxyDeps, client: ExchangeClient, request: RequestHead, route: Route) {
    this.#deps = deps;
    this.#client = client;
    this.#request = request;
    this.#route = route;
    this.#target = route.target;
    this.#retryable = IDEMPOTENT.has(request.method) && request.body === 'none';
    this.#mayRetry = this.#retryable;
  }

  start(): void {
    this.#attempt(this.#route.target, false);
  }

  /** Request body bytes from the client; false when the origin's buffer is full (the client pauses). */
  sendBody(chunk: Buffer): boolean {
    const origin = this.#origin;
    if (!origin || this.#state === DONE) return true;
    return origin.socket.write(chunk);
  }

  /** The client stopped taking bytes and now takes more. */
  onClientDrain(): void {
    if (this.#state === RELAYING_BODY) this.#origin?.socket.resume();
  }

  /** The client went away: the origin's work stops too. */
  cancel(): void {
    if (this.#state === DONE) return;
    this.#state = DONE;
    this.#release();
    this.#dropOrigin();
  }

  onResponseTimeout(): void {
    if (this.#state === AWAITING_HEAD) {
      this.#failed({ answer: TrafficErrors.responseTimeout(), connectionFailed: false });
    }
  }

  onOriginDrain(): void {
    this.#client.resumeBody();
  }

  onOriginData(chunk: Buffer): void {
    if (this.#state === RELAYING_BODY) return this.#relay(chunk, 0);
    if (this.#state !== AWAITING_HEAD) return;
    let buffer = this.#head ? Buffer.concat([this.#head, chunk]) : chunk;
    const limit = this.#deps.settings.maxResponseHeaderBytes;
    for (;;) {
      const scanFrom = this.#head ? Math.max(0, this.#head.length - 3) : 0;
      const end = headEnd(buffer, scanFrom);
      if (end < 0 || end > limit) {
        if (end > limit || buffer.length > limit) {
          return this.#failed({
            answer: TrafficErrors.badGateway('the origin sent too large response headers'),
            connectionFailed: false,
          });
        }
        if (hasBareLineFeed(buffer, scanFrom)) {
          return this.#failed({
            answer: TrafficErrors.badGateway('the origin sent an invalid response'),
            connectionFailed: false,
          });
        }
        // Kept across reads: a copy, as the origin connection reuses its read buffer.
        this.#head = buffer === chunk ? Buffer.from(chunk) : buffer;
        return;
      }
      this.#head = undefined;
      let response: ResponseHead;
      try {
        response = parseResponseHead(buffer, 0, end);
      } catch (error) {
        if (!(error instanceof HeadError)) throw error;
        return this.#failed({
          answer: TrafficErrors.badGateway('the origin sent an invalid response'),
          connectionFailed: false,
        });
      }
      if (response.status >= 100 && response.status < 200) {
        // An interim answer (100 Continue, 103 Early Hints) is dropped; a 101 was not asked for.
        if (response.status === 101) {
          return this.#failed({
            answer: TrafficErrors.badGateway('the origin sent an invalid response'),
            connectionFailed: false,
          });
        }
        if (end === buffer.length) return;
        buffer = buffer.subarray(end);
        continue;
      }
      return this.#respond(response, buffer, end);
    }
  }

  onOriginEnd(): void {
    if (this.#state === RELAYING_BODY && this.#response?.framing === 'close' && !this.#framer.done) {
      // The body that runs to the end of the connection is complete.
      this.#originReusable = false;
      return this.#complete();
    }
    const error: NodeJS.ErrnoException = new Error('origin closed the connection');
    error.code = 'ECONNRESET';
    this.onOriginError(error);
  }

  onOriginError(error: NodeJS.ErrnoException): void {
    if (this.#state === DONE) return;
    if (this.#state === RELAYING_BODY) {
      this.#state = DONE;
      this.#release();
      this.#dropOrigin();
      return this.#client.abort();
    }
    this.#failed(
      error.code === 'EIDLE'
        ? { answer: TrafficErrors.badGateway('the origin connection failed'), connectionFailed: false }
        : classify(error),
    );
  }

  #attempt(target: Target, fresh: boolean): void {
    this.#target = target;
    const { endpoint } = target;
    if (egressRefuses(endpoint, this.#deps.egress)) {
      return this.#failed({ answer: TrafficErrors.egressRefused(), connectionFailed: true });
    }
    endpoint.outstanding++;
    endpoint.connections++;
    this.#held = true;
    const origin = (fresh ? undefined : takeIdle(endpoint)) ?? new OriginConnection(endpoint, this.#deps.settings);
    origin.user = this;
    this.#origin = origin;
    origin.socket.write(
      upstreamHead(
        this.#request,
        this.#route.hostFor(target),
        this.#client.clientAddress,
        this.#client.https,
        this.#route.forwardHeader,
      ),
      'latin1',
    );
    origin.awaitResponse(this.#deps.settings.responseTimeoutMs);
  }

  #respond(response: ResponseHead, buffer: Buffer, end: number): void {
    this.#state = RELAYING_BODY;
    this.#response = response;
    const { endpoint } = this.#target;
    if (endpoint.failedAt !== 0) endpoint.failedAt = 0;
    const route = this.#route;
    route.answered(this.#target);
    const status = response.status;
    const hasBody = this.#request.method !== 'HEAD' && status !== 204 && status !== 304;
    if (!hasBody) this.#framer.length(0);
    else if (response.framing === 'length') this.#framer.length(response.contentLength);
    else if (response.framing === 'chunked') this.#framer.chunked();
    else this.#framer.untilClose();
    if (response.close) this.#originReusable = false;
    const client = this.#client;
    client.markActive();
    this.#closeClient = client.closeRequested || !client.requestComplete || (hasBody && response.framing === 'close');
    const cookie = this.#target === route.target ? route.setCookie : route.retryCookie(this.#target);
    let taken: number;
    try {
      taken = this.#framer.consume(buffer, end);
    } catch (error) {
      if (!(error instanceof FramingError)) throw error;
      // Nothing was written to the client yet: it can still get the 502.
      this.#state = AWAITING_HEAD;
      return this.#failed({
        answer: TrafficErrors.badGateway('the origin sent an invalid response'),
        connectionFailed: false,
      });
    }
    if (end + taken < buffer.length) this.#originReusable = false;
    let flowing: boolean;
    if (taken <= COALESCE_BYTES) {
      // One write (one syscall) for the head and the first body bytes: the whole answer when it is small.
      flowing = client.socket.write(
        downstreamResponse(response, hasBody, cookie, this.#closeClient, buffer, end + taken),
      );
    } else {
      client.socket.cork();
      client.socket.write(downstreamHead(response, hasBody, cookie, this.#closeClient), 'latin1');
      flowing = client.socket.write(ownedOriginBytes(buffer.subarray(end, end + taken)));
      client.socket.uncork();
      this.#noteRetained();
    }
    if (this.#framer.done) return this.#complete();
    // More body to come: the next reads go to the connection's own buffer, written on without a copy.
    if (this.#origin) this.#origin.streaming = true;
    if (!flowing) this.#origin?.socket.pause();
  }

  #relay(chunk: Buffer, start: number): void {
    let taken: number;
    try {
      taken = this.#framer.consume(chunk, start);
    } catch (error) {
      if (!(error instanceof FramingError)) throw error;
      this.#state = DONE;
      this.#release();
      this.#dropOrigin();
      return this.#client.abort();
    }
    if (start + taken < chunk.length) this.#originReusable = false;
    this.#client.markActive();
    const flowing = this.#client.socket.write(
      ownedOriginBytes(start === 0 && taken === chunk.length ? chunk : chunk.subarray(start, start + taken)),
    );
    this.#noteRetained();
    if (this.#framer.done) return this.#complete();
    if (!flowing) this.#origin?.socket.pause();
  }

  /** A write the kernel did not take at once still references the origin connection's read buffer. */
  #noteRetained(): void {
    if (this.#client.socket.writableLength > 0 && this.#origin) this.#origin.retained = true;
  }

  #complete(): void {
    this.#state = DONE;
    this.#release();
    const origin = this.#origin;
    this.#origin = undefined;
    if (origin) {
      if (this.#originReusable && this.#client.requestComplete) returnIdle(origin);
      else {
        origin.user = undefined;
        origin.destroy();
      }
    }
    this.#client.finish(this.#closeClient);
  }

  /** No answer from this origin: retry when allowed, else Cloudflare's error answer. */
  #failed(failure: UpstreamFailure): void {
    if (this.#state !== AWAITING_HEAD) return;
    const stale = this.#origin?.reused === true && this.#head === undefined;
    this.#release();
    this.#dropOrigin();
    const target = this.#target;
    if (this.#client.socket.destroyed) {
      this.#state = DONE;
      return;
    }
    if (failure.connectionFailed && stale && this.#retryable && !this.#staleRetried) {
      // A kept-alive connection the origin had closed meanwhile: the request never reached it.
      this.#staleRetried = true;
      return this.#attempt(target, true);
    }
    if (failure.connectionFailed) target.endpoint.markFailed();
    if (this.#mayRetry && failure.connectionFailed) {
      this.#mayRetry = false;
      const next = this.#route.retryTarget(target);
      if (next) return this.#attempt(next, false);
    }
    this.#state = DONE;
    this.#client.answer(failure.answer);
  }

  /** Ends this request's share of the endpoint's counters (once per attempt). */
  #release(): void {
    if (!this.#held) return;
    this.#held = false;
    const { endpoint } = this.#target;
    endpoint.outstanding--;
    endpoint.connections--;
  }

  #dropOrigin(): void {
    const origin = this.#origin;
    this.#origin = undefined;
    this.#head = undefined;
    if (!origin) return;
    origin.user = undefined;
    origin.destroy();
  }
}
