import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EgressPolicy } from '../../egress/index.ts';
import { applyIdleTimeout, httpServerOptions, type HttpTimeouts } from '../../shared/http-timeouts.ts';
import type { Logger } from '../../shared/logger.ts';
import { portInUse } from '../../shared/port-in-use.ts';
import type { HealthEventBus } from '../health/events.ts';
import { HeaderSessions } from './affinity.ts';
import type { LoadBalancerDirectory } from './directory.ts';
import { EndpointRegistry } from './endpoints.ts';
import { HealthSource, type HealthReader } from './health-source.ts';
import { proxyRequest, type ProxyDeps } from './http-proxy.ts';
import { RouteCache } from './route-cache.ts';
import type { TrafficSettings } from './settings.ts';
import { proxyUpgrade } from './websocket-proxy.ts';

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
}

/**
 * The load balancers' data plane: an HTTP listener (the traffic port) whose requests are proxied by
 * Host to the origins their load balancer steers to. A BackgroundService of the platform.
 */
export class TrafficListener {
  readonly name = 'lb-traffic';
  readonly #options: TrafficListenerOptions;
  #server: Server | undefined;
  #deps: ProxyDeps | undefined;
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
    const deps: ProxyDeps = {
      routes: new RouteCache(options.directory),
      health: new HealthSource(options.health, options.healthEvents),
      endpoints: new EndpointRegistry(options.settings.idleTimeoutMs, options.egress),
      sessions: new HeaderSessions(),
      random: Math.random,
      settings: options.settings,
      egress: options.egress,
      logger: options.logger,
    };
    const server = createServer(httpServerOptions(options.httpTimeouts), (req, res) => proxyRequest(deps, req, res));
    applyIdleTimeout(server, options.httpTimeouts);
    server.on('upgrade', (req, socket, head) => proxyUpgrade(deps, req, socket, head));
    server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
      if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
      const status = error.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
      socket.end(`HTTP/1.1 ${status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    });
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
    this.#server = server;
    this.#deps = deps;
    this.#port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    const deps = this.#deps;
    this.#server = undefined;
    this.#deps = undefined;
    this.#port = undefined;
    if (!server || !deps) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 2_000).unref();
    });
    deps.routes.close();
    deps.health.close();
    deps.endpoints.close();
    deps.sessions.clear();
  }
}
