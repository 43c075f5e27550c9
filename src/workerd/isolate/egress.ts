import { env as platformEnv } from 'cloudflare:workers';
import { EGRESS_BINDING, takeBinding, type EgressRule } from './contract.js';

/**
 * Checks the address of a fetch() to an IP literal (or `localhost`) against the operator's egress lists
 * before workerd does: workerd enforces them (every address a name resolves to included), but its error
 * for a refused fetch is "internal error; reference = ...". The check here only words the refusal, so a
 * function sees `fetch() to http://10.0.0.5/ is refused: ...`. connect() is workerd's own (its error says
 * it cannot connect to the address). Rules are compared in one 128-bit space, IPv4 as IPv4-mapped IPv6,
 * the way kj's NetworkFilter matches them. The lists come in a hidden json binding this module keeps (they
 * name the host's own addresses); without it fetch() is left alone.
 */

interface Rule {
  text: string;
  v4: boolean;
  base: bigint;
  bits: number;
}
const MAPPED = 0xffffn << 32n;

function v4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((value, p) => (value << 8n) | BigInt(p), 0n);
}
function v6(text: string): bigint | undefined {
  let tail = text;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(tail);
  if (dotted) {
    const value = v4(dotted[1]!);
    if (value === undefined) return undefined;
    tail = tail.slice(0, -dotted[1]!.length) + (value >> 16n).toString(16) + ':' + (value & 0xffffn).toString(16);
  }
  const [head, rest] = tail.split('::');
  const a = head ? head.split(':') : [];
  const b = rest === undefined ? [] : rest ? rest.split(':') : [];
  const groups = rest === undefined ? a : [...a, ...Array<string>(8 - a.length - b.length).fill('0'), ...b];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return undefined;
  return groups.reduce((value, g) => (value << 16n) | BigInt(parseInt(g, 16)), 0n);
}
const covers = (rule: Rule, address: bigint, isV4: boolean) =>
  (rule.v4 ? address >> 32n === 0xffffn : !isV4) &&
  (rule.bits === 0 || address >> BigInt(128 - rule.bits) === rule.base >> BigInt(128 - rule.bits));

function refusal(host: string, allow: Rule[], deny: Rule[]): string | undefined {
  const addresses: [bigint, boolean][] = [];
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
    for (const rule of allow) if (covers(rule, address, isV4) && rule.bits > allowBits) allowBits = rule.bits;
    if (allowBits < 0) return 'no --egress-allow range covers it';
    let denied: Rule | undefined;
    for (const rule of deny)
      if (rule.bits >= allowBits && covers(rule, address, isV4) && !(denied !== undefined && denied.bits >= rule.bits))
        denied = rule;
    if (denied) return 'denied by ' + denied.text;
  }
  return undefined;
}

const EGRESS = takeBinding(platformEnv, EGRESS_BINDING) as { allow: EgressRule[]; deny: EgressRule[] } | undefined;
if (EGRESS !== undefined) {
  const parse = (rules: EgressRule[]): Rule[] => rules.map((rule) => ({ ...rule, base: BigInt('0x' + rule.base) }));
  const allow = parse(EGRESS.allow);
  const deny = parse(EGRESS.deny);
  const nativeFetch = globalThis.fetch;
  globalThis.fetch = function fetch(input: RequestInfo | URL, init?: RequestInit) {
    let url: URL;
    try {
      url = new URL(input instanceof Request ? input.url : String(input));
    } catch {
      return nativeFetch(input, init);
    }
    const why = refusal(url.hostname.toLowerCase(), allow, deny);
    if (why === undefined) return nativeFetch(input, init);
    return Promise.reject(
      new TypeError(
        'fetch() to ' +
          url.origin +
          '/ is refused: the egress policy of this server does not let functions reach ' +
          url.hostname +
          ' (' +
          why +
          ')',
      ),
    );
  } as typeof globalThis.fetch;
}
