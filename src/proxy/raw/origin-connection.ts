import { connect, type Socket } from 'node:net';
import type { Endpoint } from '../endpoints.ts';
import type { ProxySettings } from '../settings.ts';
import { SharedReadBuffer } from './shared-read-buffer.ts';

/** Idle kept-alive connections per origin endpoint; more are closed when their exchange ends. */
const MAX_IDLE_PER_ENDPOINT = 128;
/**
 * Reads of a response head (and of whatever body comes with it) land in one buffer shared by every origin
 * connection of the process (see SharedReadBuffer), as client reads do: the exchange copies what it keeps (a
 * partial head) or writes (the client's answer is built in a buffer of its own, see heads.ts
 * `downstreamResponse`). One warm buffer rather than one per connection, which under load were each cold when
 * read into. Apart from the client side's: writing to a TLS client inside an origin read callback may hand the
 * client's connection its next request at once.
 */
const SHARED_READ_BYTES = 64 * 1024;
const originReads = new SharedReadBuffer(SHARED_READ_BYTES);
const sharedReads = originReads.bytes;
/**
 * While a body streams (`streaming`), the connection reads into a buffer of its own, whose bytes the relay
 * writes to the client without a copy: small while the reads are, grown when a read fills it (256 KiB reads
 * cut the reads and writes per MiB by 4 against Node's 64 KiB, measured 700-900 -> 570-590 us of CPU per 1 MiB
 * answer), and dropped once the connection is idle again, so an idle connection holds no read buffer.
 */
const SMALL_READ_BYTES = 16 * 1024;
const LARGE_READ_BYTES = 256 * 1024;

/**
 * Origin bytes to hand to a write, which may keep them queued past the read callback: a copy when they lie in
 * the shared read buffer (the reads of a streaming body land in the connection's own, so nothing is copied on
 * the way a body normally goes).
 */
export function ownedOriginBytes(chunk: Buffer): Buffer {
  return originReads.owned(chunk);
}

/** The exchange currently using an origin connection: it gets the socket's events. */
export interface OriginUser {
  onOriginData(chunk: Buffer): void;
  /** The origin ended its side (EOF). */
  onOriginEnd(): void;
  /** A socket error, a connect timeout (code ETIMEDOUT) or an idle timeout (code EIDLE). */
  onOriginError(error: NodeJS.ErrnoException): void;
  /** The origin can take more of a request body. */
  onOriginDrain(): void;
  /** The response timeout ran out since the last `awaitResponse` (the exchange checks it still waits). */
  onResponseTimeout(): void;
}

/**
 * One TCP connection to an origin, kept alive across exchanges. Its listeners are attached once, for the
 * connection's life, and forward to the exchange using it (no listener churn per request). An idle one
 * waits in its endpoint's pool (most recent first, so the warmest are reused and the others idle out);
 * one that the origin closes, errors or stays silent for the idle timeout is dropped.
 */
export class OriginConnection {
  readonly socket: Socket;
  readonly endpoint: Endpoint;
  user: OriginUser | undefined;
  /** It carried an exchange before: a failure before any answer may just be the origin closing it meanwhile. */
  reused = false;
  /**
   * Set by the exchange when bytes of the last read are still referenced after its callback (a write
   * to the client that is queued, not yet in the kernel): the next read then gets a new buffer.
   */
  retained = false;
  /**
   * The exchange relays a body that has more to come: reads go to the connection's own buffer (set by the
   * exchange after the read that brought the head; cleared when the connection goes idle).
   */
  streaming = false;
  #readBuffer: Buffer | undefined;
  /** The last read into the shared buffer filled it: a large body streams, read it in large reads at once. */
  #sharedReadFilled = false;
  #connectTimer: NodeJS.Timeout | undefined;
  #responseTimer: NodeJS.Timeout | undefined;

  constructor(endpoint: Endpoint, settings: ProxySettings) {
    this.endpoint = endpoint;
    const socket = connect({
      host: endpoint.address,
      port: endpoint.port,
      // Names are resolved through the egress policy, so a name that points at a refused address is not reached.
      lookup: endpoint.lookup,
      // Heads go out at once: with Nagle's algorithm a request written in parts waits for a delayed ACK.
      noDelay: true,
      // Reads land in a buffer of this connection's (reused while nothing keeps its bytes) and skip the
      // Readable stream machinery: a new 64 KiB buffer and a 'data' event per read cost more than the
      // proxying itself for small answers.
      // (Node asks for the next buffer after each callback.)
      onread: {
        buffer: () => (this.streaming ? this.#ownBuffer() : sharedReads),
        callback: (bytes: number, buffer: Uint8Array) => {
          this.#onRead(bytes, buffer as Buffer);
          return true;
        },
      },
    });
    this.socket = socket;
    this.#connectTimer = setTimeout(() => {
      const error: NodeJS.ErrnoException = new Error('origin connect timeout');
      error.code = 'ETIMEDOUT';
      this.#fail(error);
    }, settings.connectTimeoutMs);
    socket.once('connect', () => {
      clearTimeout(this.#connectTimer);
      this.#connectTimer = undefined;
    });
    socket.setTimeout(settings.idleTimeoutMs);
    socket.on('end', () => {
      if (this.user) this.user.onOriginEnd();
      this.destroy();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => this.#fail(error));
    socket.on('timeout', () => {
      const error: NodeJS.ErrnoException = new Error('origin connection idle');
      error.code = 'EIDLE';
      this.#fail(error);
    });
    socket.on('drain', () => this.user?.onOriginDrain());
    socket.on('close', () => {
      clearTimeout(this.#connectTimer);
      clearTimeout(this.#responseTimer);
      if (!this.user) return void dropIdle(this);
      const error: NodeJS.ErrnoException = new Error('origin connection closed');
      error.code = 'ECONNRESET';
      this.#fail(error);
    });
  }

  #onRead(bytes: number, buffer: Buffer): void {
    const user = this.user;
    // Bytes while idle: the origin broke the protocol; this connection cannot carry another request.
    if (!user) return void this.destroy();
    user.onOriginData(buffer.subarray(0, bytes));
    if (buffer === sharedReads) this.#sharedReadFilled = bytes === buffer.length;
    // (Unless the exchange ended and the connection went idle meanwhile: shrink() dropped the buffer.)
    if (this.#readBuffer === buffer) {
      if (bytes === buffer.length && buffer.length < LARGE_READ_BYTES) {
        this.#readBuffer = Buffer.allocUnsafe(LARGE_READ_BYTES);
      } else if (this.retained) this.#readBuffer = Buffer.allocUnsafe(buffer.length);
    }
    this.retained = false;
  }

  #ownBuffer(): Buffer {
    this.#readBuffer ??= Buffer.allocUnsafe(this.#sharedReadFilled ? LARGE_READ_BYTES : SMALL_READ_BYTES);
    return this.#readBuffer;
  }

  /** Idle: reads go to the shared buffer again, and the own buffer goes (see SMALL_READ_BYTES). */
  shrink(): void {
    this.streaming = false;
    this.#readBuffer = undefined;
  }

  get connecting(): boolean {
    return this.socket.connecting;
  }

  /**
   * Starts the response timeout of the request just sent. One timer per connection, re-armed for each
   * request (no timer created and cleared per request); when it fires, the exchange using the connection
   * decides whether it was still waiting for its response head.
   */
  awaitResponse(ms: number): void {
    if (this.#responseTimer) this.#responseTimer.refresh();
    else {
      this.#responseTimer = setTimeout(() => this.user?.onResponseTimeout(), ms);
      this.#responseTimer.unref();
    }
  }

  destroy(): void {
    clearTimeout(this.#connectTimer);
    clearTimeout(this.#responseTimer);
    if (!this.user) dropIdle(this);
    this.socket.destroy();
  }

  #fail(error: NodeJS.ErrnoException): void {
    const user = this.user;
    this.user = undefined;
    this.destroy();
    user?.onOriginError(error);
  }
}

/** An idle connection to the endpoint, if one is still open. */
export function takeIdle(endpoint: Endpoint): OriginConnection | undefined {
  const idle = endpoint.idle;
  while (idle.length > 0) {
    const connection = idle.pop()!;
    if (!connection.socket.destroyed && connection.socket.readable) return connection;
  }
  return undefined;
}

/** Back to the pool after a complete exchange (or closed, when the pool is full). */
export function returnIdle(connection: OriginConnection): void {
  connection.user = undefined;
  connection.reused = true;
  const idle = connection.endpoint.idle;
  if (idle.length >= MAX_IDLE_PER_ENDPOINT || connection.socket.destroyed) return void connection.socket.destroy();
  // Nothing is expected from an idle origin; reading on lets its close (or stray bytes) be seen at once.
  connection.socket.resume();
  connection.shrink();
  idle.push(connection);
}

function dropIdle(connection: OriginConnection): void {
  const idle = connection.endpoint.idle;
  const at = idle.lastIndexOf(connection);
  if (at >= 0) idle.splice(at, 1);
}
