import { BlockList, isIP } from 'node:net';
import type { TokenCondition } from './principal.ts';

/** One CIDR range: `203.0.113.0/24`, `2001:db8::/32`; a bare address is its own /32 or /128. */
export interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** A CIDR as Cloudflare's token conditions write them, or undefined when it is not one. */
export function parseCidr(text: string): Cidr | undefined {
  const [address = '', prefixText, ...rest] = text.trim().split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return undefined;
  const max = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

function blockListOf(ranges: readonly string[]): BlockList {
  const list = new BlockList();
  for (const range of ranges) {
    const cidr = parseCidr(range);
    if (cidr) list.addSubnet(cidr.address, cidr.prefix, cidr.family);
  }
  return list;
}

/** A peer address as sockets give it: an IPv4 client on a dual-stack socket is `::ffff:a.b.c.d`. */
function normalize(ip: string): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  const address = ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  const version = isIP(address);
  if (version === 0) return undefined;
  return { address, family: version === 4 ? 'ipv4' : 'ipv6' };
}

function matches(ranges: readonly string[], ip: { address: string; family: 'ipv4' | 'ipv6' }): boolean {
  return blockListOf(ranges).check(ip.address, ip.family);
}

/**
 * Whether a request from `ip` meets the token's `condition.request_ip`: in one of `in` (when given) and in none of
 * `not_in`. An unknown address meets no `in` list (a condition never fails open).
 */
export function requestIpAllowed(condition: TokenCondition | null | undefined, ip: string | undefined): boolean {
  const rule = condition?.request_ip;
  if (!rule) return true;
  const peer = ip === undefined ? undefined : normalize(ip);
  if (rule.in && rule.in.length > 0 && (!peer || !matches(rule.in, peer))) return false;
  if (rule.not_in && rule.not_in.length > 0 && (!peer || matches(rule.not_in, peer))) return false;
  return true;
}

/** Whether every address `inner` covers is one `outer` covers. */
function rangeWithin(inner: Cidr, outer: Cidr): boolean {
  return inner.family === outer.family && inner.prefix >= outer.prefix && matches([cidrText(outer)], inner);
}

const cidrText = (cidr: Cidr) => `${cidr.address}/${cidr.prefix}`;

/**
 * Whether a token with `child` as its condition can be used from no address a token with `parent` cannot: each of
 * the child's `in` ranges lies in one of the parent's, and each of the parent's `not_in` ranges in one of the
 * child's.
 */
export function conditionWithin(child: TokenCondition | null | undefined, parent: TokenCondition | null | undefined) {
  const outer = parent?.request_ip;
  if (!outer) return true;
  const inner = child?.request_ip;
  const parse = (list: string[] | undefined) => (list ?? []).map(parseCidr).filter((c): c is Cidr => c !== undefined);
  if (outer.in && outer.in.length > 0) {
    const childIn = parse(inner?.in);
    if (childIn.length === 0) return false;
    if (!childIn.every((range) => parse(outer.in).some((allowed) => rangeWithin(range, allowed)))) return false;
  }
  const childNotIn = parse(inner?.not_in);
  return parse(outer.not_in).every((denied) => childNotIn.some((range) => rangeWithin(denied, range)));
}
