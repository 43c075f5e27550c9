import { Agent, type AgentOptions } from 'node:http';
import type { LookupFunction } from 'node:net';
import type { EgressPolicy } from '../egress/index.ts';
import type { Clock } from '../shared/clock.ts';
import type { OriginConnection } from './raw/origin-connection.ts';

/** Origins without a port are reached on HTTP's. */
const DEFAULT_ORIGIN_PORT = 80;
const MAX_SOCKETS_PER_ORIGIN = 1024;
const MAX_IDLE_SOCKETS_PER_ORIGIN = 128;

/**
 * One origin address:port as the data plane sees it: its keep-alive agent, and the counters the
 * least_outstanding_requests and least_connections policies read. Shared by every pool (and load
 * balancer) that lists the same address and port, since they load the same server.
 */
export class Endpoint {
  readonly address: string;
  readonly port: number;
  /** For the connections handed to node:http (upgrades, HTTP/1.0 clients, Expect: 100-continue). */
  readonly agent: Agent;
  /** The raw data plane's idle kept-alive connections, most recent last (see raw/origin-connection.ts). */
  readonly idle: OriginConnection[] = [];
  /** Resolves a name through the egress policy (IP literals are checked apart, see upstream.ts). */
  readonly lookup: LookupFunction;
  /** Requests sent and not yet answered in full. */
  outstanding = 0;
  /**
   * Connections in use to it: those carrying a request, and upgraded ones (WebSocket) for their whole
   * life. Idle kept-alive sockets do not count: they carry no client.
   */
  connections = 0;
  /** When a connection to it last failed (ms on `clock`; 0 = not recently): see `isFailing`. */
  failedAt = 0;
  /** Passive health's time (the platform's clock: a test moves it past PASSIVE_FAILURE_MS). */
  readonly clock: Clock;
  /** When the egress policy last allowed this endpoint (ms), so the hot path checks at most every few seconds. */
  egressCheckedAt = -Infinity;

  /** A connection to it failed: it is passed over for PASSIVE_FAILURE_MS. */
  markFailed(): void {
    this.failedAt = this.clock.now();
    passiveFailureCount++;
  }

  /**
   * Counts one request sent to this endpoint (outstanding, and a connection in use). `release` ends both
   * once, whichever path gets there first; `keepConnection` (an upgraded WebSocket) ends only the request
   * and returns what ends the connection when the socket closes.
   */
  occupy(): { release(): void; keepConnection(): () => void } {
    this.outstanding++;
    this.connections++;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.outstanding--;
        this.connections--;
      },
      keepConnection: () => {
        if (held) {
          held = false;
          this.outstanding--;
        }
        return () => this.connections--;
      },
    };
  }

  constructor(address: string, port: number, idleMs: number, egress: EgressPolicy, clock: Clock) {
    this.clock = clock;
    this.address = address;
    this.port = port;
    this.lookup = egress.lookupFor(port);
    // Agent options reach net.createConnection, which takes noDelay (the AgentOptions type omits it).
    const options: AgentOptions & { noDelay: boolean } = {
      keepAlive: true,
      maxSockets: MAX_SOCKETS_PER_ORIGIN,
      maxFreeSockets: MAX_IDLE_SOCKETS_PER_ORIGIN,
      // Reusing the most recent socket keeps the warmest connections busy and lets the others idle out.
      scheduling: 'lifo',
      timeout: idleMs,
      // Headers and small bodies go out at once: with Nagle's algorithm a response written in two parts
      // waits for the peer's delayed ACK (40 ms on Linux).
      noDelay: true,
    };
    this.agent = new Agent(options);
  }
}

/**
 * Passive health: an origin whose connection just failed is passed over for this long (when another
 * origin can take the request), so requests do not keep hitting a dead origin until the monitor's next
 * probe marks it down. After that the next request tries it again.
 */
export const PASSIVE_FAILURE_MS = 2_000;

/** Connection failures marked so far in this process: what steering worked out ahead is stale once it moves. */
let passiveFailureCount = 0;

export function passiveFailures(): number {
  return passiveFailureCount;
}

export function isFailing(endpoint: Endpoint, now: number): boolean {
  return endpoint.failedAt !== 0 && now - endpoint.failedAt < PASSIVE_FAILURE_MS;
}

export function originPort(origin: Origin): number {
  return origin.port || DEFAULT_ORIGIN_PORT;
}

/** An origin as configured: its address (IP or name) and port (0 or none: HTTP's). */
export interface Origin {
  address: string;
  port?: number | undefined;
}

/** Endpoints by address and port, created on first use and kept while traffic runs. */
export class EndpointRegistry {
  readonly #endpoints = new Map<string, Endpoint>();
  #byOrigin = new WeakMap<Origin, Endpoint>();
  readonly #idleMs: number;
  readonly #egress: EgressPolicy;
  /** Passive health's time, given to every endpoint (steering reads it too). */
  readonly clock: Clock;

  constructor(idleMs: number, egress: EgressPolicy, clock: Clock) {
    this.#idleMs = idleMs;
    this.#egress = egress;
    this.clock = clock;
  }

  for(origin: Origin): Endpoint {
    // Steering asks several times per request for each origin: the origin object (kept by the route cache
    // until the next configuration read) remembers its endpoint, so the hot path builds no key string.
    const known = this.#byOrigin.get(origin);
    if (known) return known;
    const endpoint = this.#forAddress(origin);
    this.#byOrigin.set(origin, endpoint);
    return endpoint;
  }

  #forAddress(origin: Origin): Endpoint {
    const port = originPort(origin);
    const key = `${origin.address}|${port}`;
    let endpoint = this.#endpoints.get(key);
    if (!endpoint) {
      endpoint = new Endpoint(origin.address, port, this.#idleMs, this.#egress, this.clock);
      this.#endpoints.set(key, endpoint);
    }
    return endpoint;
  }

  close(): void {
    for (const endpoint of this.#endpoints.values()) {
      endpoint.agent.destroy();
      for (const connection of endpoint.idle.splice(0)) connection.socket.destroy();
    }
    this.#endpoints.clear();
    this.#byOrigin = new WeakMap();
  }
}
