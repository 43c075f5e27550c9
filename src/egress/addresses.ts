import { isIP } from 'node:net';

/**
 * IP addresses as 128-bit numbers in one space: IPv4 addresses are placed where IPv4-mapped IPv6
 * addresses live (::ffff:a.b.c.d), so `::ffff:127.0.0.1` and `127.0.0.1` are the same address and an
 * IPv4 range matches both spellings.
 */
const MAPPED_PREFIX = 0xffffn << 32n;
const ALL_ONES = (1n << 128n) - 1n;

export interface Cidr {
  /** The network as written, normalised ("10.0.0.0/8", "fe80::/10"). */
  text: string;
  /** First address of the range and prefix length, in the 128-bit space. */
  base: bigint;
  bits: number;
}

/** The zone of a scoped IPv6 address ("fe80::1%eth0") names an interface, not another address. */
function withoutZone(address: string): string {
  const percent = address.indexOf('%');
  return percent === -1 ? address : address.slice(0, percent);
}

/** Parses an IPv4 or IPv6 literal into the 128-bit space; undefined if it is neither. */
export function parseIp(raw: string): bigint | undefined {
  const address = withoutZone(raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw);
  const family = isIP(address);
  if (family === 4) return MAPPED_PREFIX | ipv4ToNumber(address);
  if (family === 6) return ipv6ToNumber(address);
  return undefined;
}

function ipv4ToNumber(address: string): bigint {
  return address.split('.').reduce((value, octet) => (value << 8n) | BigInt(Number(octet)), 0n);
}

/** Only called on text node:net accepted as IPv6, so the shape is known to be valid. */
function ipv6ToNumber(address: string): bigint {
  let text = address.toLowerCase();
  // A trailing dotted quad ("::ffff:1.2.3.4") is two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const v4 = ipv4ToNumber(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailGroups];
  return groups.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}

/** Whether the number is an IPv4 address (or IPv4-mapped IPv6). */
export function isIpv4(value: bigint): boolean {
  return value >> 32n === 0xffffn;
}

/**
 * Renders a number of the 128-bit space back as text (IPv4 dotted, IPv6 compressed); `ipv6` keeps an
 * IPv4-mapped address in its IPv6 spelling (::ffff:a.b.c.d).
 */
export function formatIp(value: bigint, ipv6 = false): string {
  if (isIpv4(value)) {
    const v4 = Number(value & 0xffffffffn);
    const dotted = [24, 16, 8, 0].map((shift) => (v4 >>> shift) & 0xff).join('.');
    return ipv6 ? `::ffff:${dotted}` : dotted;
  }
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  // The longest run of two or more zero groups becomes "::" (RFC 5952).
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.length && j - i > 1) best = { start: i, length: j - i };
    i = j;
  }
  if (best.start === -1) return groups.join(':');
  return `${groups.slice(0, best.start).join(':')}::${groups.slice(best.start + best.length).join(':')}`;
}

/**
 * Parses "10.0.0.0/8", "fe80::/10" or a bare address (a single-address range). Host bits set below the
 * prefix are refused ("10.0.0.1/8"): such a typo usually means a different range was intended.
 */
export function parseCidr(raw: string): Cidr {
  const text = raw.trim();
  const slash = text.indexOf('/');
  const addressText = slash === -1 ? text : text.slice(0, slash);
  const address = parseIp(addressText);
  if (address === undefined || addressText.includes('%'))
    throw new Error(`"${text}" is not a CIDR range (use e.g. 10.0.0.0/8 or fd00::/8)`);
  const v4 = isIP(addressText) === 4;
  const maxBits = v4 ? 32 : 128;
  let bits = maxBits;
  if (slash !== -1) {
    const prefix = text.slice(slash + 1);
    bits = Number(prefix);
    if (!/^\d{1,3}$/.test(prefix) || bits > maxBits)
      throw new Error(`"${text}": the prefix length must be 0 to ${maxBits}`);
  }
  const spaceBits = v4 ? bits + 96 : bits;
  const mask = spaceBits === 0 ? 0n : (ALL_ONES << BigInt(128 - spaceBits)) & ALL_ONES;
  if ((address & mask) !== address)
    throw new Error(`"${text}" has host bits set; did you mean ${formatIp(address & mask, !v4)}/${bits}?`);
  return { text: `${formatIp(address, !v4)}/${bits}`, base: address, bits: spaceBits };
}

/** Parses a comma-separated list of CIDRs (empty entries are ignored). */
export function parseCidrList(raw: string | undefined): Cidr[] {
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map(parseCidr);
}

export function cidrContains(cidr: Cidr, address: bigint): boolean {
  if (cidr.bits === 0) return true;
  return address >> BigInt(128 - cidr.bits) === cidr.base >> BigInt(128 - cidr.bits);
}
