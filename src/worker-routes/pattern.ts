import { normaliseHostname } from '../shared/hostname.ts';

/**
 * A Workers route pattern as Cloudflare reads it: `[http://|https://][*|*.]host[/path[*]]`. The only
 * operator is `*`: at the start of the host (`*example.com`: the host and anything ending in it;
 * `*.example.com`: subhosts only) and at the end of the path (every suffix, the query string included).
 * No infix wildcard, no query string, no port. Without a path the pattern is the path `/` exactly.
 */
export interface RoutePattern {
  /** The pattern as stored: the scheme and host lowercased (hosts are case-insensitive, paths are not). */
  readonly text: string;
  /** Only this scheme matches; undefined: both. */
  readonly scheme: 'http' | 'https' | undefined;
  /** `none`: exactly `host`; `any`: `*host` (ends with it); `sub`: `*.host` (a subhost of it). */
  readonly hostWildcard: 'none' | 'any' | 'sub';
  /** Lowercase, without its wildcard. */
  readonly host: string;
  /** Starts with `/`, without its trailing `*`. */
  readonly path: string;
  readonly pathWildcard: boolean;
}

/** Cloudflare refuses longer patterns in its dashboard; a bound keeps a stored pattern reasonable. */
const MAX_PATTERN_LENGTH = 1024;

/** Parses a pattern, or says in one sentence why Cloudflare would refuse it. */
export function parseRoutePattern(raw: string): RoutePattern | { problem: string } {
  const input = raw.trim();
  if (input === '') return { problem: 'the pattern is empty' };
  if (input.length > MAX_PATTERN_LENGTH)
    return { problem: `the pattern is longer than ${MAX_PATTERN_LENGTH} characters` };
  if (/[\s?#]/.test(input)) return { problem: 'a route pattern has no query string, fragment or spaces' };
  let rest = input;
  let scheme: RoutePattern['scheme'];
  const schemeMatch = /^(https?):\/\//i.exec(rest);
  if (schemeMatch) {
    scheme = schemeMatch[1]!.toLowerCase() as 'http' | 'https';
    rest = rest.slice(schemeMatch[0].length);
  } else if (rest.includes('://')) return { problem: 'the scheme may only be http:// or https://' };
  const slash = rest.indexOf('/');
  const hostPart = (slash < 0 ? rest : rest.slice(0, slash)).toLowerCase();
  const pathPart = slash < 0 ? '/' : rest.slice(slash);

  let hostWildcard: RoutePattern['hostWildcard'] = 'none';
  let host = hostPart;
  if (host.startsWith('*.')) {
    hostWildcard = 'sub';
    host = host.slice(2);
  } else if (host.startsWith('*')) {
    hostWildcard = 'any';
    host = host.slice(1);
  }
  if (host.includes('*')) return { problem: 'a wildcard in the host may only be its first character' };
  if (host.includes(':')) return { problem: 'a route pattern has no port' };
  const checked = normaliseHostname(host);
  if (checked.problem !== undefined || checked.name !== host)
    return { problem: `the host "${hostPart}" is not a valid hostname` };

  const star = pathPart.indexOf('*');
  if (star >= 0 && star !== pathPart.length - 1)
    return { problem: 'a wildcard in the path may only be its last character (no infix wildcards)' };
  const pathWildcard = star >= 0;
  const path = pathWildcard ? pathPart.slice(0, -1) : pathPart;
  const text = `${scheme ? `${scheme}://` : ''}${hostPart}${slash < 0 ? '' : pathPart}`;
  return { text, scheme, hostWildcard, host, path, pathWildcard };
}

/** Whether the pattern's host is the zone's name or under it (Cloudflare: "Route pattern must include zone name"). */
export function withinZone(pattern: RoutePattern, zoneName: string): boolean {
  return pattern.host === zoneName || pattern.host.endsWith(`.${zoneName}`);
}

/** `hostname`: lowercase, without port or trailing dot. */
export function hostMatches(pattern: RoutePattern, hostname: string): boolean {
  switch (pattern.hostWildcard) {
    case 'none':
      return hostname === pattern.host;
    case 'any':
      return hostname.endsWith(pattern.host);
    case 'sub':
      return hostname.length > pattern.host.length + 1 && hostname.endsWith(`.${pattern.host}`);
  }
}

/** `target`: the request's path and query, as sent (route matching reads the whole URL, query included). */
export function pathMatches(pattern: RoutePattern, target: string): boolean {
  return pattern.pathWildcard ? target.startsWith(pattern.path) : target === pattern.path;
}

/**
 * Which of two patterns is the more specific (negative: `a`), so that the first match in this order is the
 * one Cloudflare picks: an exact host before any wildcard one, a longer wildcard host before a shorter one
 * (`*.host` before `*host` for the same host), then a longer path, an exact path before a wildcard one, and a
 * pattern that names its scheme before one that does not.
 */
export function compareSpecificity(a: RoutePattern, b: RoutePattern): number {
  const exactA = a.hostWildcard === 'none' ? 1 : 0;
  const exactB = b.hostWildcard === 'none' ? 1 : 0;
  if (exactA !== exactB) return exactB - exactA;
  if (a.host.length !== b.host.length) return b.host.length - a.host.length;
  if (a.hostWildcard !== b.hostWildcard) return a.hostWildcard === 'sub' ? -1 : 1;
  if (a.path.length !== b.path.length) return b.path.length - a.path.length;
  if (a.pathWildcard !== b.pathWildcard) return a.pathWildcard ? 1 : -1;
  const schemeA = a.scheme ? 1 : 0;
  const schemeB = b.scheme ? 1 : 0;
  return schemeB - schemeA;
}
