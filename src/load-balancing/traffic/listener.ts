import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { EgressPolicy } from '../../egress/index.ts';
import { applyIdleTimeout, httpServerOptions, type HttpTimeouts } from '../../shared/http-timeouts.ts';
import type { Logger } from '../../shared/logger.ts';
import { portInUse } from '../../shared/port-in-use.ts';
import type { HealthEventBus } from '../health/events.ts';
import {
  adoptClientSocket,
  ClientConnection,
  coarseClock,
  EndpointRegistry,
  hostnameOf,
  proxyRequest,
  proxyUpgrade,
  type ClientHost,
  type ProxyDeps,
} from '../../proxy/index.ts';
import { HeaderSessions } from './affinity.ts';
import type { LoadBalancerDirectory } from './directory.ts';
import type { HostHandler } from './host-handler.ts';
import { HealthSource, type HealthReader } from './health-source.ts';
import { RouteCache } from './route-cache.ts';
import { routeRequest, type RouterDeps } from './router.ts';
import type { TrafficSettings } from './settings.ts';

export interface TrafficListenerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  directory: LoadBalancerDirectory;
  health: HealthReader;
  healthEvents: HealthEventBus;
  egress: EgressPolicy;
  settings: TrafficSettings;
  /** The client-side bounds (slowloris, idle clients), as on the API listener. */
  httpTimeouts: HttpTimeouts;
  logger: Logger;
  /** Hostnames served by something other than a load balancer (public buckets), checked first. */
  hostHandler?: HostHandler | undefined;
}

/**
 * The load balancers' data plane: an HTTP listener (the traffic port) whose requests are proxied by
 * Host to the origins their load balancer steers to. A BackgroundService of the platform.
 *
 * Connections are served by the proxy engine's raw data plane (src/proxy/raw/: node:net sockets, a strict
 * head parser, bodies relayed as bytes, pooled origin connections), which costs a fraction of node:http's
 * CPU per request. A connection whose request is an upgrade (WebSocket), HTTP/1.0 or carries Expect:
 * 100-continue is handed to a node:http server that never listens (`emit('connection')`) and is proxied by
 * the engine's http-proxy.ts / websocket-proxy.ts. Routing (router.ts) is this product's part.
 */
export class TrafficListener {
  readonly name = 'lb-traffic';
  readonly #options: TrafficListenerOptions;
  #server: Server | undefined;
  #httpServer: HttpServer | undefined;
  #routing: RouterDeps | undefined;
  readonly #connections = new Set<ClientConnection>();
  #handedOff = new Set<Socket>();
  #sweep: NodeJS.Timeout | undefined;
  #port: number | undefined;

  constructor(options: TrafficListenerOptions) {
    this.#options = options;
  }

  /** The port once listening (undefined before start and after stop). */
  get port(): number | undefined {
    return this.#port;
  }

  async start(): Promise<void> {
    const options = this.#options;
    const routing: RouterDeps = {
      routes: new RouteCache(options.directory),
      health: new HealthSource(options.health, options.healthEvents),
      endpoints: new EndpointRegistry(options.settings.idleTimeoutMs, options.egress),
      sessions: new HeaderSessions(),
      random: Math.random,
    };
    const deps: ProxyDeps = {
      route: (request, https) => routeRequest(routing, request, https),
      settings: options.settings,
      egress: options.egress,
      logger: options.logger,
    };
    const hostHandler = options.hostHandler;
    const httpServer = createHttpServer(httpServerOptions(options.httpTimeouts), (req, res) => {
      if (hostHandler?.claims(hostnameOf(req.headers.host))) hostHandler.handle(req, res);
      else proxyRequest(deps, req, res);
    });
    applyIdleTimeout(httpServer, options.httpTimeouts);
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
    const handedOff = new Set<Socket>();
    const connections = this.#connections;
    const host: ClientHost = {
      deps,
      servedElsewhere: hostHandler ? (hostHeader) => hostHandler.claims(hostnameOf(hostHeader)) : () => false,
      forget: (connection) => connections.delete(connection),
      handOff: (socket, unread) => {
        handedOff.add(socket);
        socket.once('close', () => handedOff.delete(socket));
        socket.pause();
        if (unread) socket.unshift(unread);
        httpServer.emit('connection', socket);
        socket.resume();
      },
    };
    // allowHalfOpen: a client that ends its side after a request still gets the response. pauseOnConnect:
    // the accepted socket must not read before its handle is re-wrapped to read with `onread`.
    const server = createServer({ allowHalfOpen: true, noDelay: true, pauseOnConnect: true }, (accepted) => {
      // (Reads reach the callback from the event loop, after `connection` is set.)
      const adopted = adoptClientSocket(accepted, (chunk) => connection.onRead(chunk));
      const connection = new ClientConnection(adopted ?? accepted, host, adopted !== undefined);
      if (!adopted) accepted.resume();
      connections.add(connection);
    });
    this.#handedOff = handedOff;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EADDRINUSE'
            ? portInUse('load balancer traffic', options.host, options.port, '--traffic-port (env LEDGE_TRAFFIC_PORT)')
            : new Error(`cannot listen on ${options.host}:${options.port} for load balancer traffic: ${error.message}`),
        ),
      );
      server.listen(options.port, options.host, () => resolve());
    });
    // This node:http server never listens: its connections come from the raw listener. 'listening' starts
    // its connection tracking, so its headers and request timeouts apply to the connections it is given.
    httpServer.emit('listening');
    this.#server = server;
    this.#httpServer = httpServer;
    this.#routing = routing;
    this.#port = (server.address() as AddressInfo).port;
    const timeouts = options.httpTimeouts;
    this.#sweep = setInterval(
      () => sweepConnections(connections, timeouts),
      httpServerOptions(timeouts).connectionsCheckingInterval,
    );
    this.#sweep.unref();
  }

  async stop(): Promise<void> {
    const server = this.#server;
    const httpServer = this.#httpServer;
    const routing = this.#routing;
    this.#server = undefined;
    this.#httpServer = undefined;
    this.#routing = undefined;
    this.#port = undefined;
    clearInterval(this.#sweep);
    if (!server || !routing) return;
    const connections = this.#connections;
    const handedOff = this.#handedOff;
    await new Promise<void>((resolve) => {
      // Requests in flight get 2 s to finish; idle connections close at once.
      server.close(() => resolve());
      const closeIdle = () => {
        for (const connection of connections) if (connection.idle) connection.socket.destroy();
        httpServer?.closeIdleConnections();
      };
      closeIdle();
      const poll = setInterval(closeIdle, 100);
      setTimeout(() => {
        clearInterval(poll);
        for (const connection of connections) connection.socket.destroy();
        for (const socket of handedOff) socket.destroy();
      }, 2_000).unref();
      server.once('close', () => clearInterval(poll));
    });
    // Stops its connection checks (the callback's "not running" error only says it never listened).
    httpServer?.close(() => {});
    routing.routes.close();
    routing.health.close();
    routing.endpoints.close();
    routing.sessions.clear();
  }
}

/** The client-side bounds of the raw data plane, as node:http enforces them on its servers. */
function sweepConnections(connections: Set<ClientConnection>, timeouts: HttpTimeouts): void {
  const now = Date.now();
  coarseClock.now = now;
  for (const connection of connections) {
    if (now - connection.lastActive > timeouts.idleMs) connection.socket.destroy();
    else if (connection.headStartedAt !== 0 && now - connection.headStartedAt > timeouts.headersMs)
      connection.timedOut();
    else if (connection.requestStartedAt !== 0 && now - connection.requestStartedAt > timeouts.requestMs) {
      connection.timedOut();
    } else if (connection.idle && now - connection.idleSince > timeouts.keepAliveMs) connection.socket.destroy();
  }
}
