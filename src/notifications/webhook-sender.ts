import type { Socket } from 'node:net';
import type * as UndiciModule from 'undici';
import type { Dispatcher, Pool } from 'undici';
import { EgressRefusedError, type EgressPolicy } from '../egress/index.ts';

export interface WebhookResult {
  ok: boolean;
  status: number | null;
  /** Why it failed ("HTTP 503", "timeout after 5000 ms", "connect ECONNREFUSED ..."); null on success. */
  error: string | null;
}

export type WebhookCallback = (result: WebhookResult) => void;

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const MAX_ORIGINS = 1_000;
/** Per origin: a few connections, each carrying many requests in flight (see send()). */
const CONNECTIONS = 8;
const PIPELINING = 64;
/** How often sends are checked against their total deadline (one timer for all, not one per send). */
const DEADLINE_SWEEP_MS = 100;

type Undici = typeof UndiciModule;
let undici: Undici | undefined;
let loadingUndici: Promise<Undici> | undefined;
/**
 * undici is loaded on the first delivery, not with the server: its ~110 modules cost ~100 ms of start-up
 * (bench/functions, `ledge server` start to first function response), and most servers send no webhook
 * in their first seconds.
 */
function loadUndici(): Promise<Undici> {
  return (loadingUndici ??= import('undici').then((module) => (undici = module)));
}

/**
 * POSTs JSON to webhook receivers over keep-alive connection pools, one per origin (undici: a dispatcher
 * sends thousands per second to the same few hosts, and undici costs about a third of node:http's CPU per
 * request, see docs/benchmarks-history.md, "Notifications (2026-11-21)"). Connecting, waiting for the
 * answer's headers and for each body chunk are each bounded by the timeout; the answer body is drained and
 * ignored.
 *
 * Requests are pipelined (deliveries are at-least-once, so a request that undici resends after a broken
 * connection is no new risk) and the raw dispatch API is used (no response stream or header objects):
 * together with corked(), a batch of deliveries to one receiver leaves in one write and its answers
 * come back in a few reads, instead of a system call per request on both sides.
 *
 * Besides the per-phase timeouts, each send has a total deadline (connect + headers + body): a receiver
 * that trickles its answer a byte at a time would otherwise hold a delivery slot, or the API call that
 * sends a test message, for as long as it likes. Every connection passes the egress policy: IP literals
 * before connecting, names in the connector's lookup.
 */
export class WebhookSender {
  readonly #timeoutMs: number;
  readonly #deadlineMs: number;
  readonly #egress: EgressPolicy;
  readonly #pools = new Map<string, Pool>();
  readonly #sockets = new Set<Socket>();
  readonly #paths = new Map<string, { origin: string; path: string } | Error>();
  readonly #inFlight = new Set<ResultHandler>();
  #sweep: NodeJS.Timeout | undefined;

  constructor(options: { egress: EgressPolicy; timeoutMs?: number; deadlineMs?: number }) {
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#deadlineMs = options.deadlineMs ?? 10_000;
    this.#egress = options.egress;
  }

  send(url: string, body: string | Buffer, secret: string | null, requestId?: string): Promise<WebhookResult> {
    return new Promise((resolve) => this.post(url, body, secret, resolve, requestId));
  }

  /** Like send(), with a callback: the dispatcher sends thousands per second and needs no promise per send. */
  post(url: string, body: string | Buffer, secret: string | null, done: WebhookCallback, requestId?: string): void {
    if (!undici) {
      loadUndici().then(
        () => this.post(url, body, secret, done, requestId),
        (error: unknown) => done({ ok: false, status: null, error: `cannot load the HTTP client: ${String(error)}` }),
      );
      return;
    }
    const target = this.#target(url);
    if (target instanceof Error) return done({ ok: false, status: null, error: target.message });
    const headers = secret
      ? ['content-type', 'application/json', 'user-agent', USER_AGENT, 'cf-webhook-auth', secret]
      : ['content-type', 'application/json', 'user-agent', USER_AGENT];
    // The API request that set this delivery off, so a receiver's logs can be joined with Ledge's.
    if (requestId) headers.push('x-request-id', requestId);
    const handler = new ResultHandler(
      (result) => {
        this.#inFlight.delete(handler);
        done(result);
      },
      this.#timeoutMs,
      this.#deadlineMs,
    );
    this.#inFlight.add(handler);
    this.#sweep ??= setInterval(this.#expire, DEADLINE_SWEEP_MS).unref();
    this.#pool(undici, target.origin).dispatch(
      {
        method: 'POST',
        path: target.path,
        headers,
        body,
        idempotent: true,
        blocking: false,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      },
      handler,
    );
  }

  /** Ends the sends past their total deadline; stops sweeping when none is left. */
  readonly #expire = (): void => {
    const now = performance.now();
    for (const handler of this.#inFlight) handler.expireIfDue(now);
    if (this.#inFlight.size === 0) {
      clearInterval(this.#sweep);
      this.#sweep = undefined;
    }
  };

  /**
   * Runs `fn` (which sends a batch) with every open connection corked, so that the requests it writes to
   * one connection leave in one system call when it returns.
   */
  corked(fn: () => void): void {
    const sockets = [...this.#sockets];
    for (const socket of sockets) socket.cork();
    try {
      fn();
    } finally {
      for (const socket of sockets) socket.uncork();
    }
  }

  #target(url: string): { origin: string; path: string } | Error {
    let target = this.#paths.get(url);
    if (!target) {
      try {
        const parsed = new URL(url);
        target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      } catch (error) {
        target = error as Error;
      }
      if (this.#paths.size >= MAX_ORIGINS) this.#paths.clear();
      this.#paths.set(url, target);
    }
    return target;
  }

  #pool({ buildConnector, Pool }: Undici, origin: string): Pool {
    let pool = this.#pools.get(origin);
    if (!pool) {
      // Destinations are few; a runaway number of distinct origins must not keep sockets forever.
      if (this.#pools.size >= MAX_ORIGINS) this.close();
      const url = new URL(origin);
      const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
      // undici hands `lookup` on to net/tls.connect, which calls it for names (not for IP literals).
      const connector = buildConnector({ timeout: this.#timeoutMs, lookup: this.#egress.lookupFor(port) });
      pool = new Pool(origin, {
        connections: CONNECTIONS,
        pipelining: PIPELINING,
        keepAliveTimeout: 30_000,
        // The connector is undici's own; the sockets are only remembered so that corked() can batch writes.
        connect: (options, callback) => {
          const refusal = this.#egress.check(options.hostname, port);
          if (refusal) return callback(new EgressRefusedError(refusal), null);
          connector(options, (...result) => {
            const socket = result[1];
            if (socket) {
              this.#sockets.add(socket);
              socket.once('close', () => this.#sockets.delete(socket));
            }
            callback(...result);
          });
        },
      });
      this.#pools.set(origin, pool);
    }
    return pool;
  }

  close(): void {
    for (const pool of this.#pools.values()) void pool.destroy().catch(() => undefined);
    this.#pools.clear();
  }

  /** Whether a URL's host may be reached; for the test message, so a refused one is a clear 400. */
  checkUrl(url: URL) {
    return this.#egress.checkHost(url.hostname, Number(url.port) || (url.protocol === 'https:' ? 443 : 80));
  }
}

const USER_AGENT = 'Ledge-Notifications/1.0';

/**
 * undici's low-level handler: the status is all we need; the body is read and dropped chunk by chunk
 * (never kept, so no error can echo what the receiver answered).
 */
class ResultHandler implements Dispatcher.DispatchHandler {
  readonly #done: WebhookCallback;
  readonly #timeoutMs: number;
  readonly #deadlineMs: number;
  readonly #deadline: number;
  #abort: ((error: Error) => void) | undefined;
  #status = 0;
  #settled = false;

  constructor(done: WebhookCallback, timeoutMs: number, deadlineMs: number) {
    this.#done = done;
    this.#timeoutMs = timeoutMs;
    this.#deadlineMs = deadlineMs;
    this.#deadline = performance.now() + deadlineMs;
  }

  onConnect(abort: (error: Error) => void): void {
    this.#abort = abort;
  }

  /** Past the total deadline: answer now and let undici drop the request (and its connection). */
  expireIfDue(now: number): void {
    if (this.#settled || now < this.#deadline) return;
    this.#settle({ ok: false, status: null, error: `no complete answer within ${this.#deadlineMs} ms` });
    this.#abort?.(new Error('webhook deadline passed'));
  }

  onHeaders(statusCode: number): boolean {
    this.#status = statusCode;
    return true;
  }

  onData(): boolean {
    return true;
  }

  onComplete(): void {
    const status = this.#status;
    const ok = status >= 200 && status < 300;
    this.#settle({ ok, status, error: ok ? null : `HTTP ${status}` });
  }

  onError(error: Error): void {
    const code = (error as { code?: string }).code;
    if (code && TIMEOUT_CODES.has(code))
      return this.#settle({ ok: false, status: null, error: `timeout after ${this.#timeoutMs} ms` });
    // Connection-level messages only ("connect ECONNREFUSED 127.0.0.1:9", the egress refusal): undici
    // puts no response body in them.
    this.#settle({ ok: false, status: null, error: error.message });
  }

  #settle(result: WebhookResult): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#done(result);
  }
}
