import type { EgressPolicy } from '../../egress/index.ts';
import type { Clock } from '../../shared/clock.ts';
import { EndpointRegistry, ProxyServer, type HostHandler, type TlsTermination } from '../../proxy/index.ts';
import type { HttpTimeouts } from '../../shared/http-timeouts.ts';
import type { Logger } from '../../shared/logger.ts';
import type { PortSetting } from '../../shared/http-listener/port-in-use.ts';
import type { HealthEventBus } from '../health/events.ts';
import { HeaderSessions } from './affinity.ts';
import { FunctionRouter, type FunctionRoutes } from './function-routes.ts';
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
   * Workers routes and Custom Domains, checked before anything else: as on Cloudflare, a Worker on a route runs
   * in front of what the hostname otherwise serves (here a public bucket or a load balancer).
   */
  functionRoutes?: FunctionRoutes | undefined;
  /**
   * HTTPS on a second port: the same routing and host handler, TLS terminated with the certificates
   * `termination` picks (src/tls/). `plainHostHandler` wraps the plain port's host handler (routes, then
   * `hostHandler`) with what only the plain port does (ACME HTTP-01 answers, the redirect to HTTPS).
   */
  tls?: { port: number; portSetting: PortSetting; termination: TlsTermination } | undefined;
  plainHostHandler?: ((inner: HostHandler | undefined) => HostHandler) | undefined;
  /** The data plane's time: caches, sessions, passive health, timeouts (the platform's). */
  clock: Clock;
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
  #functions: FunctionRouter | undefined;

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
      routes: new RouteCache(options.directory, options.clock),
      health: new HealthSource(options.health, options.healthEvents, options.clock),
      endpoints: new EndpointRegistry(options.settings.idleTimeoutMs, options.egress, options.clock),
      sessions: new HeaderSessions(options.clock),
      random: Math.random,
      clock: options.clock,
    };
    const functions = options.functionRoutes
      ? new FunctionRouter(options.functionRoutes, options.settings.idleTimeoutMs, options.egress, options.clock)
      : undefined;
    // Workers routes and Custom Domains come before what else serves a hostname (public buckets here).
    const behindRoutes = (handler: HostHandler | undefined, https: boolean): HostHandler | undefined =>
      handler && functions
        ? {
            // (The handler's own claim first: for most requests it is no, and the routes need not be read.)
            claims: (hostname, target) =>
              handler.claims(hostname, target) && !functions.claims(hostname, target, https),
            handle: (req, res, next) => handler.handle(req, res, next),
          }
        : handler;
    type Request = Parameters<typeof routeRequest>[1];
    const common = {
      host: options.host,
      route: functions
        ? (request: Request, https: boolean) => functions.route(request, https) ?? routeRequest(routing, request, https)
        : (request: Request, https: boolean) => routeRequest(routing, request, https),
      egress: options.egress,
      settings: options.settings,
      httpTimeouts: options.httpTimeouts,
      logger: options.logger,
      clock: options.clock,
    };
    const server = new ProxyServer({
      ...common,
      port: options.port,
      // The plain port's own duties (ACME challenges, always_use_https) come before routes.
      hostHandler: options.plainHostHandler
        ? options.plainHostHandler(behindRoutes(options.hostHandler, false))
        : behindRoutes(options.hostHandler, false),
      portSetting: options.portSetting,
      what: 'load balancer traffic',
    });
    // Same routing, same host handler: whatever the plain port serves by Host, HTTPS serves too.
    const tlsServer = options.tls
      ? new ProxyServer({
          ...common,
          port: options.tls.port,
          hostHandler: behindRoutes(options.hostHandler, true),
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
      functions?.close();
      throw error;
    }
    this.#server = server;
    this.#tlsServer = tlsServer;
    this.#routing = routing;
    this.#functions = functions;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    const tlsServer = this.#tlsServer;
    const routing = this.#routing;
    this.#server = undefined;
    this.#tlsServer = undefined;
    this.#routing = undefined;
    const functions = this.#functions;
    this.#functions = undefined;
    if (!server || !routing) return;
    await Promise.all([server.stop(), tlsServer?.stop()]);
    closeRouting(routing);
    functions?.close();
  }
}

function closeRouting(routing: RouterDeps): void {
  routing.routes.close();
  routing.health.close();
  routing.endpoints.close();
  routing.sessions.clear();
}
