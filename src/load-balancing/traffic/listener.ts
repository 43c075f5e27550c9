import type { EgressPolicy } from '../../egress/index.ts';
import type { Clock } from '../../shared/clock.ts';
import { EndpointRegistry, ProxyServer, type HostHandler, type TlsTermination } from '../../proxy/index.ts';
import type { HttpTimeouts } from '../../shared/http-timeouts.ts';
import type { Logger } from '../../shared/logger.ts';
import type { PortSetting } from '../../shared/http-listener/port-in-use.ts';
import type { HealthEventBus } from '../health/events.ts';
import { HeaderSessions } from './affinity.ts';
import type { LoadBalancerDirectory } from './directory.ts';
import { HealthSource, type HealthReader } from './health-source.ts';
import { RouteCache } from './route-cache.ts';
import { routeRequest, type RouterDeps } from './router.ts';
import type { TrafficSettings } from './settings.ts';

export interface TrafficListenerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** The setting that moves the port (`--traffic-port`), named when the port is taken. */
  portSetting: PortSetting;
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
  /**
   * HTTPS on a second port: the same routing and host handler, TLS terminated with the certificates
   * `termination` picks (src/tls/). `plainHostHandler` replaces `hostHandler` on the plain port only.
   */
  tls?: { port: number; portSetting: PortSetting; termination: TlsTermination } | undefined;
  plainHostHandler?: HostHandler | undefined;
  /** Passive health's time (the platform's; tests pass a clock they advance). */
  clock?: Clock | undefined;
}

/**
 * The load balancers' data plane: an HTTP listener (the traffic port) whose requests are proxied by
 * Host to the origins their load balancer steers to. A BackgroundService of the platform. The proxying
 * is the proxy engine's (src/proxy/, ProxyServer); what is this product's is the routing: the route and
 * health caches, steering and session affinity (router.ts), kept while the listener runs.
 */
export class TrafficListener {
  readonly name = 'lb-traffic';
  readonly #options: TrafficListenerOptions;
  #server: ProxyServer | undefined;
  #tlsServer: ProxyServer | undefined;
  #routing: RouterDeps | undefined;

  constructor(options: TrafficListenerOptions) {
    this.#options = options;
  }

  /** The port once listening (undefined before start and after stop). */
  get port(): number | undefined {
    return this.#server?.port;
  }

  /** The HTTPS port once listening (undefined without TLS, before start and after stop). */
  get tlsPort(): number | undefined {
    return this.#tlsServer?.port;
  }

  async start(): Promise<void> {
    const options = this.#options;
    const routing: RouterDeps = {
      routes: new RouteCache(options.directory),
      health: new HealthSource(options.health, options.healthEvents),
      endpoints: new EndpointRegistry(options.settings.idleTimeoutMs, options.egress, options.clock),
      sessions: new HeaderSessions(),
      random: Math.random,
    };
    const common = {
      host: options.host,
      route: (request: Parameters<typeof routeRequest>[1], https: boolean) => routeRequest(routing, request, https),
      egress: options.egress,
      settings: options.settings,
      httpTimeouts: options.httpTimeouts,
      logger: options.logger,
    };
    const server = new ProxyServer({
      ...common,
      port: options.port,
      hostHandler: options.plainHostHandler ?? options.hostHandler,
      portSetting: options.portSetting,
      what: 'load balancer traffic',
    });
    // Same routing, same host handler: whatever the plain port serves by Host, HTTPS serves too.
    const tlsServer = options.tls
      ? new ProxyServer({
          ...common,
          port: options.tls.port,
          hostHandler: options.hostHandler,
          portSetting: options.tls.portSetting,
          what: 'HTTPS traffic',
          tls: options.tls.termination,
        })
      : undefined;
    try {
      await server.start();
      await tlsServer?.start();
    } catch (error) {
      await server.stop();
      closeRouting(routing);
      throw error;
    }
    this.#server = server;
    this.#tlsServer = tlsServer;
    this.#routing = routing;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    const tlsServer = this.#tlsServer;
    const routing = this.#routing;
    this.#server = undefined;
    this.#tlsServer = undefined;
    this.#routing = undefined;
    if (!server || !routing) return;
    await Promise.all([server.stop(), tlsServer?.stop()]);
    closeRouting(routing);
  }
}

function closeRouting(routing: RouterDeps): void {
  routing.routes.close();
  routing.health.close();
  routing.endpoints.close();
  routing.sessions.clear();
}
