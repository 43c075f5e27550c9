import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { GrantCheck, GrantWatcher } from '../../shared/grant-watch.ts';
import { TAIL_FLAG_TTL_MS, type TailTraces } from '../../workerd/index.ts';
import { maskClientFrames } from './client-frames.ts';
import { gatheringSender } from './gathering-sender.ts';
import { matchesFilters, passesSampling, type TailFilter } from './filters.ts';
import type { Clock } from '../../shared/clock.ts';

/** The WebSocket subprotocol `wrangler tail` asks for; Cloudflare refuses any other. */
export const TAIL_PROTOCOL = 'trace-v1';
/** Where tail WebSockets connect on the API listener: `/tail-sessions/<id>`, the id being the secret. */
export const TAIL_SOCKET_PATH = '/tail-sessions/';
/** A session that no client connects to within this time is removed (its script stops being traced). */
const CONNECT_WITHIN_MS = 60_000;
/** Events wait in a slow client's send buffer up to this size; later ones are dropped until it drains. */
const MAX_BUFFERED_BYTES = 8 * 2 ** 20;

/** How a session keeps to its creator's access: checked when its WebSocket connects, watched while it lives. */
export interface TailAccess {
  check: GrantCheck;
  watch: GrantWatcher;
}

export interface TailSessionInfo {
  id: string;
  url: string;
  expires_at: string;
}

interface Session {
  id: string;
  accountId: string;
  script: string;
  filters: TailFilter[];
  url: string;
  expiresAt: number;
  /** When tracing of its script was surely on in every isolate (see #whenTraced). */
  tracedFrom: number;
  socket: WebSocket | undefined;
  timers: NodeJS.Timeout[];
  unsubscribe: (() => void) | undefined;
  access: TailAccess | undefined;
  unwatch: (() => void) | undefined;
}

/**
 * Tail sessions (`wrangler tail`, `ledge tail`): POST .../tails creates one with its filters and answers
 * a ws:// URL on the API listener whose unguessable id is the credential, as on Cloudflare. While a
 * script has a session, its requests are traced (tail-traces.ts) and each event that passes the
 * session's filters is sent to its WebSocket as one JSON text message (wrangler's TailEventMessage).
 * A session ends when its client disconnects or deletes it, when it expires, when the script is deleted, or when
 * the access that made it is gone (TailAccess: token deleted or rolled, member removed; re-checked every second).
 */
export class TailSessions {
  readonly #traces: TailTraces;
  readonly #ttlMs: number;
  readonly #sessions = new Map<string, Session>();
  readonly #server = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024, perMessageDeflate: false });

  readonly #clock: Clock;

  constructor(deps: { traces: TailTraces; ttlMs: number }, clock: Clock) {
    this.#clock = clock;
    this.#traces = deps.traces;
    this.#ttlMs = deps.ttlMs;
  }

  create(
    accountId: string,
    script: string,
    filters: TailFilter[],
    apiOrigin: string,
    access?: TailAccess,
  ): TailSessionInfo {
    const id = randomBytes(16).toString('hex');
    const wsOrigin = apiOrigin.replace(/^http/, 'ws');
    const now = this.#clock.now();
    const firstForScript = this.list(accountId, script).length === 0;
    const session: Session = {
      id,
      accountId,
      script,
      filters,
      url: `${wsOrigin}${TAIL_SOCKET_PATH}${id}`,
      expiresAt: now + this.#ttlMs,
      // Isolates reread the flag at most TAIL_FLAG_TTL_MS after it changes; a margin for a loaded machine.
      tracedFrom: firstForScript ? now + TAIL_FLAG_TTL_MS + 250 : this.#tracedFrom(accountId, script, now),
      socket: undefined,
      timers: [],
      unsubscribe: undefined,
      access,
      unwatch: undefined,
    };
    session.timers.push(
      setTimeout(() => this.#end(session, 1000, 'tail session expired'), this.#ttlMs).unref(),
      setTimeout(() => {
        if (!session.socket) this.#end(session);
      }, CONNECT_WITHIN_MS).unref(),
    );
    this.#sessions.set(id, session);
    // Whoever made it losing access (token deleted or rolled, member removed) ends it, connected or not.
    session.unwatch = access?.watch(() => this.#end(session, 1000, 'access to the account was revoked'));
    this.#trace(accountId, script);
    return this.#info(session);
  }

  list(accountId: string, script: string): TailSessionInfo[] {
    return [...this.#sessions.values()]
      .filter((s) => s.accountId === accountId && s.script === script)
      .map((s) => this.#info(s));
  }

  /** Ends one session of the script; false when it has no such session. */
  delete(accountId: string, script: string, id: string): boolean {
    const session = this.#sessions.get(id);
    if (!session || session.accountId !== accountId || session.script !== script) return false;
    this.#end(session, 1000, 'tail session deleted');
    return true;
  }

  /** The script is gone: its sessions end (wrangler stops on a normal closure). */
  closeScript(accountId: string, script: string): void {
    for (const session of [...this.#sessions.values()])
      if (session.accountId === accountId && session.script === script)
        this.#end(session, 1000, 'the Worker was deleted');
  }

  closeAll(): void {
    for (const session of [...this.#sessions.values()]) this.#end(session, 1001, 'server shutting down');
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Sessions with a client connected (tests wait for these; `wrangler tail --format json` prints nothing). */
  get connectedCount(): number {
    return [...this.#sessions.values()].filter((s) => s.socket).length;
  }

  /**
   * An HTTP upgrade on the API listener: takes it when it is for a tail session (answering 404 for an
   * unknown or taken one, 400 without the trace-v1 protocol); false when the path is not a tail path.
   */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const path = (request.url ?? '').split('?')[0]!;
    if (!path.startsWith(TAIL_SOCKET_PATH)) return false;
    const session = this.#sessions.get(path.slice(TAIL_SOCKET_PATH.length));
    if (!session || session.socket) {
      refuse(socket, 404, 'no such tail session');
      return true;
    }
    const protocols = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
    if (!protocols.includes(TAIL_PROTOCOL)) {
      refuse(socket, 400, `the tail WebSocket needs the ${TAIL_PROTOCOL} subprotocol`);
      return true;
    }
    // Answer the handshake only once every isolate traces the script: what happens after "connected" shows.
    const accept = () => {
      if (!this.#sessions.has(session.id) || session.socket || socket.destroyed) {
        socket.destroy();
        return;
      }
      // The API listener's idle timeout (http-timeouts.ts) is for HTTP requests: a quiet tail is not idle.
      (socket as Socket).setTimeout?.(0);
      maskClientFrames(socket);
      this.#server.handleUpgrade(request, socket, head, (ws) => this.#attach(session, ws, socket as Socket));
    };
    // The WebSocket is a door of its own: the token's condition.request_ip holds for its address too.
    const peer = request.socket.remoteAddress;
    const allowed = session.access ? session.access.check(peer) : Promise.resolve(true);
    void allowed.then((ok) => {
      if (!ok) {
        refuse(socket, 403, 'access to this tail session was revoked, or is not allowed from this address');
        return;
      }
      const left = Math.max(0, session.tracedFrom - this.#clock.now());
      if (left > 0) setTimeout(accept, left);
      else accept();
    });
    return true;
  }

  #attach(session: Session, ws: WebSocket, socket: Socket): void {
    session.socket = ws;
    // wrangler's first message is `{"debug": false}`; nothing else is expected from a client.
    ws.on('message', () => undefined);
    ws.on('close', () => this.#end(session));
    ws.on('error', () => this.#end(session));
    // Without filters that look inside an event, it is sent as workerd wrote it, never parsed here.
    const inspects = session.filters.some((f) => !('sampling_rate' in f) && !('scriptVersion' in f));
    const send = gatheringSender(ws, socket, this.#clock);
    session.unsubscribe = this.#traces.subscribe(session.accountId, session.script, (traced) => {
      if (ws.readyState !== ws.OPEN || ws.bufferedAmount > MAX_BUFFERED_BYTES) return;
      if (inspects ? matchesFilters(traced.event, session.filters) : passesSampling(session.filters))
        send(traced.bytes);
    });
  }

  #end(session: Session, code?: number, reason?: string): void {
    if (this.#sessions.get(session.id) !== session) return;
    this.#sessions.delete(session.id);
    for (const timer of session.timers) clearTimeout(timer);
    session.unsubscribe?.();
    session.unwatch?.();
    const ws = session.socket;
    if (ws && ws.readyState === ws.OPEN) ws.close(code ?? 1000, reason);
    this.#trace(session.accountId, session.script);
  }

  /**
   * Tracing of a script follows its sessions: on while it has any, with the client's peer address in the
   * events while one of them filters by client address (`wrangler tail --ip`).
   */
  #trace(accountId: string, script: string): void {
    const sessions = [...this.#sessions.values()].filter((s) => s.accountId === accountId && s.script === script);
    const peerAddress = sessions.some((s) => s.filters.some((f) => 'client_ip' in f));
    this.#traces.setTraced(accountId, script, sessions.length > 0, 'sessions', peerAddress);
  }

  #tracedFrom(accountId: string, script: string, now: number): number {
    const other = [...this.#sessions.values()].find((s) => s.accountId === accountId && s.script === script);
    return other ? other.tracedFrom : now;
  }

  #info(session: Session): TailSessionInfo {
    return { id: session.id, url: session.url, expires_at: new Date(session.expiresAt).toISOString() };
  }
}

function refuse(socket: Duplex, status: number, message: string): void {
  const reason = status === 404 ? 'Not Found' : status === 403 ? 'Forbidden' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(message)}\r\nConnection: close\r\n\r\n${message}`,
  );
}
