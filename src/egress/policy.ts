import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import { cidrContains, formatIp, parseCidr, parseIp, type Cidr } from './addresses.ts';
import type { Clock } from '../shared/clock.ts';

/**
 * Ranges refused unless the operator allows them explicitly: link-local (where cloud metadata services
 * answer, with credentials of the machine), "this host" addresses (connecting to 0.0.0.0 reaches
 * loopback), and the metadata addresses that live outside link-local.
 */
export const DEFAULT_DENY: readonly { cidr: string; why: string }[] = [
  { cidr: '169.254.0.0/16', why: 'link-local, cloud metadata' },
  { cidr: 'fe80::/10', why: 'IPv6 link-local' },
  { cidr: '0.0.0.0/8', why: '"this host", reaches loopback' },
  { cidr: '::/128', why: 'unspecified address, reaches loopback' },
  { cidr: 'fd00:ec2::254/128', why: 'cloud metadata (AWS IPv6)' },
  { cidr: '100.100.100.200/32', why: 'cloud metadata (Alibaba)' },
];

/** Addresses that reach this machine: loopback, "this host", and the interfaces' own addresses. */
const LOCAL_RANGES = ['127.0.0.0/8', '::1/128', '0.0.0.0/8', '::/128'].map(parseCidr);
const INTERFACES_TTL_MS = 5_000;
const DEFAULT_RESOLVE_TIMEOUT_MS = 3_000;

interface Rule {
  cidr: Cidr;
  action: 'allow' | 'deny';
  /** Ties between equally specific rules: the operator's deny, then the operator's allow, then built-ins. */
  rank: number;
  why: string;
}

export interface EgressSettings {
  /** Operator CIDRs that may be reached (LEDGE_EGRESS_ALLOW / --egress-allow). */
  allow: readonly Cidr[];
  /** Operator CIDRs that may not be reached (LEDGE_EGRESS_DENY / --egress-deny). */
  deny: readonly Cidr[];
}

export interface EgressRefusal {
  /** The name or address the caller asked for. */
  host: string;
  /** The address that is refused (the host itself, or what it resolved to). */
  address: string;
  port: number;
  why: string;
}

/** Thrown (or passed to a connect callback) when a connection would reach a refused address. */
export class EgressRefusedError extends Error {
  readonly code = 'ERR_EGRESS_REFUSED';
  readonly refusal: EgressRefusal;

  constructor(refusal: EgressRefusal) {
    super(describeRefusal(refusal));
    this.name = 'EgressRefusedError';
    this.refusal = refusal;
  }
}

/**
 * "127.0.0.1:8787 is refused by the egress policy (Ledge's own API listener)", or for a name
 * "db.internal resolves to 10.0.0.5, which the egress policy refuses (denied by 10.0.0.0/8)".
 */
export function describeRefusal(refusal: EgressRefusal): string {
  const target = refusal.port > 0 ? hostPort(refusal.address, refusal.port) : refusal.address;
  if (parseIp(refusal.host) !== undefined) return `${target} is refused by the egress policy (${refusal.why})`;
  return `${refusal.host} resolves to ${target}, which the egress policy refuses (${refusal.why})`;
}

function hostPort(address: string, port: number): string {
  return isIP(address) === 6 ? `[${address}]:${port}` : `${address}:${port}`;
}

/**
 * Which addresses monitors, previews and webhooks may connect to. An address is refused when the most
 * specific rule covering it is a deny rule (operator deny and allow lists, plus DEFAULT_DENY); no rule
 * means allowed, so local use with loopback and private origins works out of the box. Ledge's own
 * listeners (API and functions ports on any address of this machine) are always refused.
 *
 * The check runs twice: when a monitor, pool, preview or webhook is written (check/checkHost, so the
 * API answers 400), and when connecting (check for IP literals, lookupFor for names), because a name can
 * later resolve to a refused address.
 */
export class EgressPolicy {
  readonly #rules: Rule[];
  readonly #ownListeners: { port: () => number | undefined; name: string }[] = [];
  #interfaces: { at: number; addresses: Set<bigint> } | undefined;
  readonly #clock: Clock;

  /** `clock`: when the list of this host's own addresses is read again (the platform's). */
  constructor(settings: Partial<EgressSettings> = {}, clock: Clock) {
    this.#clock = clock;
    this.#rules = [
      ...(settings.deny ?? []).map((cidr) => ({
        cidr,
        action: 'deny' as const,
        rank: 3,
        why: `denied by ${cidr.text}`,
      })),
      ...(settings.allow ?? []).map((cidr) => ({ cidr, action: 'allow' as const, rank: 2, why: '' })),
      ...DEFAULT_DENY.map(({ cidr, why }) => {
        const parsed = parseCidr(cidr);
        return { cidr: parsed, action: 'deny' as const, rank: 1, why: `${parsed.text}: ${why}` };
      }),
    ];
  }

  /**
   * Registers a port Ledge listens on (API, functions): a number, or a function for a port known only
   * once listening (port 0 in the configuration). 0 and undefined mean "none yet".
   */
  addOwnListener(port: number | (() => number | undefined), name: string): void {
    this.#ownListeners.push({ port: typeof port === 'number' ? () => port : port, name });
  }

  /** Checks an IP literal; a non-IP host is not checked here (see checkHost). Port 0: unknown. */
  check(host: string, port: number): EgressRefusal | undefined {
    const address = parseIp(host);
    if (address === undefined) return undefined;
    const why = this.#refusedBecause(address, port);
    return why === undefined ? undefined : { host, address: formatIp(address), port, why };
  }

  /**
   * Checks a host as given in a pool or a webhook URL: literals at once, names through DNS. A name that
   * does not resolve (now) is not refused here; connecting checks it again.
   */
  async checkHost(
    host: string,
    port: number,
    timeoutMs = DEFAULT_RESOLVE_TIMEOUT_MS,
  ): Promise<EgressRefusal | undefined> {
    if (parseIp(host) !== undefined) return this.check(host, port);
    const addresses = await resolveAll(host, timeoutMs);
    for (const { address } of addresses) {
      const refusal = this.check(address, port);
      if (refusal) return { ...refusal, host };
    }
    return undefined;
  }

  /**
   * A `lookup` for node:net / node:http / undici's connector: resolves as dns.lookup does and fails
   * with EgressRefusedError when any address the name resolves to is refused, so no connection is made.
   * (IP literals are connected to without a lookup: callers check them with check() first.)
   */
  lookupFor(port: number): LookupFunction {
    return (hostname, options, callback) => {
      // One callback shape for both modes: `all` answers a list, otherwise one address and its family.
      const done = callback as (error: Error | null, address?: string | LookupAddress[], family?: number) => void;
      dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
        if (error) return done(error);
        for (const { address } of addresses) {
          const refusal = this.check(address, port);
          if (refusal) return done(new EgressRefusedError({ ...refusal, host: hostname }));
        }
        if (options.all) return done(null, addresses);
        const first = addresses[0];
        if (!first) return done(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }));
        done(null, first.address, first.family);
      });
    };
  }

  #refusedBecause(address: bigint, port: number): string | undefined {
    const listener = port > 0 ? this.#ownListeners.find((own) => own.port() === port) : undefined;
    if (listener !== undefined && this.#isLocal(address)) return `Ledge's own ${listener.name} listener`;
    let best: Rule | undefined;
    for (const rule of this.#rules) {
      if (!cidrContains(rule.cidr, address)) continue;
      if (!best || rule.cidr.bits > best.cidr.bits || (rule.cidr.bits === best.cidr.bits && rule.rank > best.rank))
        best = rule;
    }
    return best?.action === 'deny' ? best.why : undefined;
  }

  #isLocal(address: bigint): boolean {
    if (LOCAL_RANGES.some((range) => cidrContains(range, address))) return true;
    const now = this.#clock.now();
    if (!this.#interfaces || now - this.#interfaces.at > INTERFACES_TTL_MS) {
      const addresses = new Set<bigint>();
      for (const list of Object.values(networkInterfaces()))
        for (const entry of list ?? []) {
          const parsed = parseIp(entry.address);
          if (parsed !== undefined) addresses.add(parsed);
        }
      this.#interfaces = { at: now, addresses };
    }
    return this.#interfaces.addresses.has(address);
  }
}

/** All addresses of a name, or none when it does not resolve within the time limit. */
function resolveAll(host: string, timeoutMs: number): Promise<LookupAddress[]> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve([]), timeoutMs);
    dnsLookup(host, { all: true }, (error, addresses) => {
      clearTimeout(timer);
      resolve(error ? [] : addresses);
    });
  });
}
