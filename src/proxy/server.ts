import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { createServer, type Server, type Socket } from 'node:net';
import type { EgressPolicy } from '../egress/index.ts';
import { createHttpServer } from '../shared/http-listener/http-server.ts';
import { listen } from '../shared/http-listener/listen.ts';
import type { PortSetting } from '../shared/http-listener/port-in-use.ts';
import { stopGracefully } from '../shared/http-listener/stop.ts';
import { checkingIntervalMs, type HttpTimeouts } from '../shared/http-timeouts.ts';
import type { Logger } from '../shared/logger.ts';
import type { HostHandler } from './host-handler.ts';
import { ChurnList } from './churn-list.ts';
import { proxyRequest, type ProxyDeps } from './http-proxy.ts';
import { ClientConnection, type ClientHost } from './raw/client-connection.ts';
import { readIntoSharedBuffer } from './raw/client-socket.ts';
import { CoarseClock } from './raw/coarse-clock.ts';
import { hostnameOf } from '../shared/hostname.ts';
import type { Router } from './route.ts';
import type { ProxySettings } from './settings.ts';
import { proxyUpgrade } from './websocket-proxy.ts';
import type { Clock, ClockTimer } from '../shared/clock.ts';
import { createH2Server } from './tls/h2-server.ts';
import { TlsTerminator, type TlsTermination } from './tls/terminate.ts';

export interface ProxyServerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** Where each request goes (the product's routing). */
  route: Router;
  egress: EgressPolicy;
  settings: ProxySettings;
  /** The client-side bounds (slowloris, idle clients), as on the API listener. */
  httpTimeouts: HttpTimeouts;
  logger: Logger;
  /** Hostnames served by something other than the router (public buckets), checked first. */
  hostHandler?: HostHandler | undefined;
  /** The product's setting that moves the port, named when the port is taken. */
  portSetting: PortSetting;
  /** What the listener serves, as its errors name it. */
  what: string;
  /** The time of its timeouts (the sweep runs on it). */
  clock: Clock;
  /** Serve HTTPS (HTTP/1.1 and HTTP/2 by ALPN) with the certificates this picks; without it, plain HTTP. */
  tls?: TlsTermination | undefined;
}

/**
 * An HTTP listener whose requests are proxied to the origins `route` names.
 *
 * Connections are served by the raw data plane (raw/: node:net sockets, a strict head parser, bodies
 * relayed as bytes, pooled origin connections), which costs a fraction of node:http's CPU per request.
 * A connection whose request is an upgrade (WebSocket), HTTP/1.0 or carries Expect: 100-continue is
 * handed to a node:http server that never listens (`emit('connection')`) and is proxied by
 * http-proxy.ts / websocket-proxy.ts.
 */
export class ProxyServer {
  readonly #options: ProxyServerOptions;
  #server: Server | undefined;
  #httpServer: HttpServer | undefined;
  readonly #connections = new ChurnList<ClientConnection>();
  #handedOff = new ChurnList<HandedOffSocket>();
  #sweep: ClockTimer | undefined;
  #port: number | undefined;

  constructor(options: ProxyServerOptions) {
    this.#options = options;
  }

  /** The port once listening (undefined before start and after stop). */
  get port(): number | undefined {
    return this.#port;
  }

  async start(): Promise<void> {
    const options = this.#options;
    const deps: ProxyDeps = {
      route: options.route,
      settings: options.settings,
      egress: options.egress,
      logger: options.logger,
      clock: options.clock,
    };
    const hostHandler = options.hostHandler;
    const handle = (req: IncomingMessage, res: ServerResponse) => {
      if (hostHandler?.claims(hostnameOf(req.headers.host), req.url ?? '/'))
        hostHandler.handle(req, res, () => proxyRequest(deps, req, res));
      else proxyRequest(deps, req, res);
    };
    const httpServer = createHttpServer({ timeouts: options.httpTimeouts }, handle);
    httpServer.on('upgrade', (req, socket, head) => proxyUpgrade(deps, req, socket, head));
    httpServer.on('clientError', (error: NodeJS.ErrnoException, socket) => {
      if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
      const status =
        error.code === 'HPE_HEADER_OVERFLOW'
          ? '431 Request Header Fields Too Large'
          : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? '408 Request Timeout'
            : '400 Bad Request';
      socket.end(`HTTP/1.1 ${status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    });
    const handedOff = new ChurnList<HandedOffSocket>();
    const connections = this.#connections;
    // Started here, at the clock's time: connections are stamped with it before the first sweep.
    const coarseClock = new CoarseClock(options.clock);
    const host: ClientHost = {
      deps,
      coarseClock,
      servedElsewhere: hostHandler ? (hostname, target) => hostHandler.claims(hostname, target) : () => false,
      forget: (connection) => connections.remove(connection),
      https: options.tls !== undefined,
      handOff: (socket, unread) => {
        trackHandedOff(handedOff, socket);
        socket.pause();
        if (unread) socket.unshift(unread);
        httpServer.emit('connection', socket);
        socket.resume();
      },
    };
    const tls = options.tls;
    const h2Server = tls ? createH2Server(options.httpTimeouts, handle) : undefined;
    const serveSecure = (socket: TLSSocket) => {
      if (socket.alpnProtocol === 'h2') return void h2Server!.emit('secureConnection', socket);
      // A TLS-ALPN-01 validation only looks at the certificate.
      if (socket.alpnProtocol === 'acme-tls/1') return void socket.end();
      // (Reads reach the callback from the event loop, after `connection` is set.)
      const adopted = readIntoSharedBuffer(socket, (chunk) => connection.onRead(chunk));
      const connection = new ClientConnection(socket, host, adopted);
      connections.add(connection);
    };
    const terminator = tls ? new TlsTerminator(tls, options.httpTimeouts.headersMs, serveSecure) : undefined;
    // allowHalfOpen: a client that ends its side after a request still gets the response. pauseOnConnect
    // the accepted socket must not read before it is set to read into the shared buffer (raw/client-socket.ts).
    const server = createServer({ allowHalfOpen: true, noDelay: true, pauseOnConnect: true }, (accepted) => {
      if (tls) {
        // Counted as handed off from the start (a stop destroys it), whatever serves it after the handshake.
        trackHandedOff(handedOff, accepted);
        return terminator!.accept(accepted, options.clock.now());
      }
      // (Reads reach the callback from the event loop, after `connection` is set.)
      const shared = readIntoSharedBuffer(accepted, (chunk) => connection.onRead(chunk));
      const connection = new ClientConnection(accepted, host, shared);
      accepted.resume();
      connections.add(connection);
    });
    this.#handedOff = handedOff;
    const port = await listen(server, {
      host: options.host,
      port: options.port,
      what: options.what,
      setting: options.portSetting,
      purpose: options.what,
    });
    // This node:http server never listens: its connections come from the raw listener. 'listening' starts
    // its connection tracking, so its headers and request timeouts apply to the connections it is given.
    httpServer.emit('listening');
    this.#server = server;
    this.#httpServer = httpServer;
    this.#port = port;
    const timeouts = options.httpTimeouts;
    const clock = options.clock;
    const intervalMs = checkingIntervalMs(timeouts.headersMs);
    const sweep = (): void => {
      const now = coarseClock.tick();
      sweepConnections(connections, timeouts, now, intervalMs);
      terminator?.sweep(now);
      this.#sweep = clock.schedule(intervalMs, sweep);
    };
    coarseClock.tick();
    this.#sweep = clock.schedule(intervalMs, sweep);
  }

  async stop(): Promise<void> {
    const server = this.#server;
    const httpServer = this.#httpServer;
    this.#server = undefined;
    this.#httpServer = undefined;
    this.#port = undefined;
    this.#sweep?.cancel();
    this.#sweep = undefined;
    if (!server) return;
    const connections = this.#connections;
    const handedOff = this.#handedOff;
    // Idle connections close at once and as their last answer goes out (rechecked: the raw data plane's
    // connections finish outside node:http); requests in flight get the grace of stop.ts.
    await stopGracefully(server, {
      closeIdle: () => {
        connections.forEach((connection) => {
          if (connection.idle) connection.socket.destroy();
        });
        httpServer?.closeIdleConnections();
      },
      closeAll: () => {
        connections.forEach((connection) => connection.socket.destroy());
        handedOff.forEach((entry) => entry.socket.destroy());
      },
      recheckIdleMs: 100,
    });
    // Stops its connection checks (the callback's "not running" error only says it never listened).
    httpServer?.close(() => {});
  }
}

/** The client-side bounds of the raw data plane, as node:http enforces them on its servers. */
function sweepConnections(
  connections: ChurnList<ClientConnection>,
  timeouts: HttpTimeouts,
  now: number,
  intervalMs: number,
): void {
  // A stamp is the coarse clock's time at the last sweep, so the byte it marks may have gone up to a sweep
  // interval later: one interval more keeps a connection from being closed before it was idle that long.
  const idleBoundMs = timeouts.idleMs + intervalMs;
  connections.forEach((connection) => {
    // (Its stamp may be a sweep interval early, as the others.)
    if (connection.destroyAt !== 0) {
      if (now - connection.destroyAt >= intervalMs) connection.socket.destroy();
      return;
    }
    // The headers and request timeouts first: a head or request past its bound is answered 408 even when
    // the connection is also past the idle timeout by the time a (late) sweep looks at it, as node:http's
    // own check would have answered it when the bound passed.
    if (connection.headStartedAt !== 0 && now - connection.headStartedAt > timeouts.headersMs) connection.timedOut();
    else if (connection.requestStartedAt !== 0 && now - connection.requestStartedAt > timeouts.requestMs) {
      connection.timedOut();
    } else if (now - connection.lastActive > idleBoundMs) connection.socket.destroy();
    else if (connection.idle && now - connection.idleSince > timeouts.keepAliveMs) connection.socket.destroy();
  });
}

/** A socket served by something other than the raw data plane (node:http, node:tls), until it closes. */
interface HandedOffSocket {
  readonly socket: Socket;
  listIndex: number;
}

function trackHandedOff(handedOff: ChurnList<HandedOffSocket>, socket: Socket): void {
  const entry: HandedOffSocket = { socket, listIndex: -1 };
  handedOff.add(entry);
  socket.once('close', () => handedOff.remove(entry));
}
