import {
  Endpoint,
  isValidHostHeader,
  TrafficErrors,
  type ErrorAnswer,
  type ProxyRoute,
  type ProxyTarget,
  type RequestView,
} from '../../proxy/index.ts';
import type { EgressPolicy } from '../../egress/index.ts';
import type { Clock } from '../../shared/clock.ts';

/**
 * Workers routes and Custom Domains as the traffic port sees them (injected by the platform: the table
 * lives in src/worker-routes/, the functions side in src/workerd/). Both the plain and the TLS listener
 * consult it before load balancers and public buckets.
 */
export interface FunctionRoutes {
  /** The script serving a request, if a route or Custom Domain names one (one object per script per table). */
  match(hostname: string, target: string, https: boolean): object | undefined;
  /** The header that hands the request to that script on the functions port (the client's Host is kept). */
  forwardHeader(script: object): { name: string; value: string };
  /** Where this node's functions port is reached (undefined while the runtime does not listen). */
  functionsAddress(): { address: string; port: number } | undefined;
}

/**
 * A request for a script: relayed by the same raw proxy engine as load-balanced traffic, to this node's
 * functions port, with the client's Host and one header naming the script. There is one place to send it:
 * no retry elsewhere, no affinity.
 */
class FunctionRoute implements ProxyRoute {
  readonly target: ProxyTarget;
  readonly forwardHeader: { name: string; value: string };

  constructor(endpoint: Endpoint, forwardHeader: { name: string; value: string }) {
    this.target = { endpoint };
    this.forwardHeader = forwardHeader;
  }

  hostFor(): undefined {
    return undefined;
  }
  retryTarget(): undefined {
    return undefined;
  }
  retryCookie(): undefined {
    return undefined;
  }
  answered(): void {}
}

/** Routes requests to scripts: one endpoint (the functions port), one route object per script, kept. */
export class FunctionRouter {
  readonly #routes: FunctionRoutes;
  readonly #idleMs: number;
  readonly #egress: EgressPolicy;
  readonly #clock: Clock;
  #endpoint: Endpoint | undefined;
  #byScript = new WeakMap<object, FunctionRoute>();

  constructor(routes: FunctionRoutes, idleMs: number, egress: EgressPolicy, clock: Clock) {
    this.#routes = routes;
    this.#idleMs = idleMs;
    this.#egress = egress;
    this.#clock = clock;
  }

  /** Whether a route or Custom Domain claims the request (public buckets and load balancers come after). */
  claims(hostname: string, target: string, https: boolean): boolean {
    return this.#routes.match(hostname, target, https) !== undefined;
  }

  /** The route for a request a script serves; undefined: none does. */
  route(request: RequestView, https: boolean): ProxyRoute | ErrorAnswer | undefined {
    const script = this.#routes.match(request.hostname, request.target, https);
    if (script === undefined) return undefined;
    const host = request.host;
    // The script's request.url is built from the Host as sent: one no URL can hold is the client's mistake.
    if (host !== undefined && !isValidHostHeader(host)) return TrafficErrors.badHost();
    const endpoint = this.#functionsEndpoint();
    if (!endpoint) return TrafficErrors.originRefused();
    let route = this.#byScript.get(script);
    if (!route || route.target.endpoint !== endpoint) {
      route = new FunctionRoute(endpoint, this.#routes.forwardHeader(script));
      this.#byScript.set(script, route);
    }
    return route;
  }

  close(): void {
    this.#endpoint?.agent.destroy();
    for (const connection of this.#endpoint?.idle.splice(0) ?? []) connection.socket.destroy();
    this.#endpoint = undefined;
    this.#byScript = new WeakMap();
  }

  #functionsEndpoint(): Endpoint | undefined {
    const where = this.#routes.functionsAddress();
    if (where === undefined) return undefined;
    const known = this.#endpoint;
    if (known && known.port === where.port && known.address === where.address) return known;
    this.close();
    const endpoint = new Endpoint(where.address, where.port, this.#idleMs, this.#egress, this.#clock);
    // Ledge's own functions port, which the egress policy refuses to origins: this hop is not an origin's.
    endpoint.egressCheckedAt = Number.POSITIVE_INFINITY;
    this.#endpoint = endpoint;
    return endpoint;
  }
}
