import { networkInterfaces } from 'node:os';
import { DEFAULT_DENY, parseCidr, parseIp, type Cidr } from '../egress/index.ts';
import { capnpList, capnpString } from './capnp.ts';

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
export function networkService(network: FunctionsNetwork): string {
  const list = (cidrs: string[]) => capnpList(cidrs.map(capnpString));
  return `(name = "internet", network = (allow = ${list(network.allow)}, deny = ${list(network.deny)}))`;
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
 * Source of a module that checks the address of a fetch() to an IP literal (or `localhost`) against the
 * same lists before workerd does: workerd enforces them (every address a name resolves to included),
 * but its error for a refused fetch is "internal error; reference = ...". The check here only words the
 * refusal, so a function sees `fetch() to http://10.0.0.5/ is refused: ...`. connect() is workerd's own
 * (its error says it cannot connect to the address). Rules are compared in one 128-bit space, IPv4 as
 * IPv4-mapped IPv6, the way kj's NetworkFilter matches them.
 */
export function egressShimSource(network: FunctionsNetwork | undefined): string {
  if (!network) return 'export {};\n';
  const rules = (cidrs: string[]) =>
    cidrs.map((text) => {
      const cidr = parseCidr(text);
      return { text, v4: !text.includes(':'), base: cidr.base.toString(16), bits: cidr.bits };
    });
  return `const ALLOW = ${JSON.stringify(rules(network.allow))};
const DENY = ${JSON.stringify(rules(network.deny))};
for (const rule of [...ALLOW, ...DENY]) rule.base = BigInt('0x' + rule.base);
const MAPPED = 0xffffn << 32n;
function v4(text) {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((value, p) => (value << 8n) | BigInt(p), 0n);
}
function v6(text) {
  let tail = text;
  const dotted = /(\\d+\\.\\d+\\.\\d+\\.\\d+)$/.exec(tail);
  if (dotted) {
    const value = v4(dotted[1]);
    if (value === undefined) return undefined;
    tail = tail.slice(0, -dotted[1].length) + (value >> 16n).toString(16) + ':' + (value & 0xffffn).toString(16);
  }
  const [head, rest] = tail.split('::');
  const a = head ? head.split(':') : [];
  const b = rest === undefined ? [] : rest ? rest.split(':') : [];
  const groups = rest === undefined ? a : [...a, ...Array(8 - a.length - b.length).fill('0'), ...b];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return undefined;
  return groups.reduce((value, g) => (value << 16n) | BigInt(parseInt(g, 16)), 0n);
}
const covers = (rule, address, isV4) => (rule.v4 ? address >> 32n === 0xffffn : !isV4) && (rule.bits === 0 || address >> BigInt(128 - rule.bits) === rule.base >> BigInt(128 - rule.bits));
function refusal(host) {
  const addresses = [];
  if (host === 'localhost' || host.endsWith('.localhost')) addresses.push([MAPPED | 0x7f000001n, true], [1n, false]);
  else if (host.startsWith('[')) {
    const value = v6(host.slice(1, -1));
    if (value !== undefined) addresses.push([value, false]);
  } else {
    const value = v4(host);
    if (value !== undefined) addresses.push([MAPPED | value, true]);
  }
  for (const [address, isV4] of addresses) {
    let allowBits = -1;
    for (const rule of ALLOW) if (covers(rule, address, isV4) && rule.bits > allowBits) allowBits = rule.bits;
    if (allowBits < 0) return 'no --egress-allow range covers it';
    let denied;
    for (const rule of DENY) if (rule.bits >= allowBits && covers(rule, address, isV4) && !(denied?.bits >= rule.bits)) denied = rule;
    if (denied) return 'denied by ' + denied.text;
  }
  return undefined;
}
const nativeFetch = globalThis.fetch;
globalThis.fetch = function fetch(input, init) {
  let url;
  try {
    url = new URL(input instanceof Request ? input.url : String(input));
  } catch {
    return nativeFetch(input, init);
  }
  const why = refusal(url.hostname.toLowerCase());
  if (why === undefined) return nativeFetch(input, init);
  return Promise.reject(new TypeError('fetch() to ' + url.origin + '/ is refused: the egress policy of this server does not let functions reach ' + url.hostname + ' (' + why + ')'));
};
`;
}
