import { networkInterfaces } from 'node:os';
import { DEFAULT_DENY, parseCidr, parseIp, type Cidr } from '../egress/index.ts';
import type { EgressRule } from './isolate/contract.ts';
import type { Service } from './config/types.ts';

/** The operator's egress lists (--egress-allow / --egress-deny), as monitors and webhooks use them. */
export interface FunctionsEgress {
  allow: readonly Cidr[];
  deny: readonly Cidr[];
}

/**
 * What functions may not reach unless the operator allows it: besides EgressPolicy's DEFAULT_DENY
 * (link-local, cloud metadata, "this host"), everything that is not the public internet, as on
 * Cloudflare, where a Worker reaches public addresses only: loopback (Ledge's own API, functions and
 * R2 ports listen there), private and carrier-grade NAT ranges (workerd's own "private" list).
 */
const FUNCTIONS_DENY = [
  '127.0.0.0/8',
  '::1/128',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '172.16.0.0/12',
  '192.168.0.0/16',
  'fc00::/7',
];

/** The allow and deny CIDR lists of functions' network, as workerd's network service takes them. */
export interface FunctionsNetwork {
  allow: string[];
  deny: string[];
}

/**
 * Functions' network from the operator's lists. workerd refuses an address unless an allow CIDR covers
 * it, and then refuses it when a deny CIDR at least as specific covers it too (kj NetworkFilter); that is
 * EgressPolicy's "the most specific rule wins" with ties to deny, so the operator's lists carry over as
 * they are. Built-in denies the operator allows exactly (say `--egress-allow 10.0.0.0/8`) are dropped,
 * as EgressPolicy ranks the operator's allow above its own defaults.
 *
 * The host's own addresses (every interface's, read now) are denied one by one: 192.0.2.2 on a host whose
 * API listens on 0.0.0.0 is "public" to workerd. An address added to the host later is covered at the
 * next config write (deploys, restarts).
 */
export function functionsNetwork(egress: FunctionsEgress): FunctionsNetwork {
  const allowed = new Set(egress.allow.map((cidr) => cidr.text));
  const builtIn = [...DEFAULT_DENY.map((d) => d.cidr), ...FUNCTIONS_DENY, ...hostAddresses()].map(
    (text) => parseCidr(text).text,
  );
  const deny = [...new Set([...egress.deny.map((c) => c.text), ...builtIn.filter((text) => !allowed.has(text))])];
  return { allow: ['0.0.0.0/0', '::/0', ...allowed], deny };
}

/**
 * The `internet` service of a workerd config: the network every Worker's fetch() and connect() go
 * through (a Worker's globalOutbound defaults to it). Unix sockets are never allowed.
 */
export function networkService(network: FunctionsNetwork): Service {
  return { name: 'internet', network: { allow: network.allow, deny: network.deny } };
}

/** This machine's interface addresses (loopback included: it is denied above anyway), as single-address CIDRs. */
function hostAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) {
      const address = entry.address.split('%')[0]!;
      if (parseIp(address) === undefined) continue;
      out.push(`${address}/${entry.family === 'IPv4' ? 32 : 128}`);
    }
  }
  return out;
}

/**
 * The lists as the egress module inside workerd compares them (isolate/egress.ts, which only words a
 * refusal workerd makes anyway): IPv4 rules in the IPv4-mapped space, bases in hex. null: no lists.
 */
export function egressRules(network: FunctionsNetwork | undefined): { allow: EgressRule[]; deny: EgressRule[] } | null {
  if (!network) return null;
  const rules = (cidrs: string[]): EgressRule[] =>
    cidrs.map((text) => {
      const cidr = parseCidr(text);
      return { text, v4: !text.includes(':'), base: cidr.base.toString(16), bits: cidr.bits };
    });
  return { allow: rules(network.allow), deny: rules(network.deny) };
}
