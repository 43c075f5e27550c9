import type { CorsRule } from './cors-rules.ts';

/** Response headers of a CORS answer, lowercase names. */
export type CorsHeaders = Record<string, string>;

export interface CorsPreflight {
  /** The request's Origin header. */
  origin: string;
  /** Access-Control-Request-Method. */
  method: string;
  /** Access-Control-Request-Headers, as sent (a comma-separated list, or undefined). */
  requestHeaders?: string | undefined;
}

export type PreflightAnswer =
  | { allowed: true; headers: CorsHeaders }
  /** No rule allows it: S3 and R2 answer 403 (with `headers`, the Vary a cache needs). */
  | { allowed: false; headers: CorsHeaders };

const PREFLIGHT_VARY = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';

/**
 * A preflight (OPTIONS with Origin and Access-Control-Request-Method) against a bucket's rules, as S3
 * matches them: the first rule that allows the origin, the method and every requested header wins.
 * Origins match exactly (with `*` wildcards), methods exactly, header names case-insensitively (with
 * `*` wildcards). Pure: the S3 endpoint and public buckets call it with the rules they loaded.
 */
export function corsPreflight(rules: readonly CorsRule[] | undefined, request: CorsPreflight): PreflightAnswer {
  const vary = { vary: PREFLIGHT_VARY };
  const requested = parseHeaderList(request.requestHeaders);
  for (const rule of rules ?? []) {
    if (!originAllowed(rule, request.origin) || !methodAllowed(rule, request.method)) continue;
    const patterns = rule.allowed.headers ?? [];
    if (!requested.every((header) => patterns.some((pattern) => wildcardMatch(pattern, header, true)))) continue;
    const headers: CorsHeaders = {
      'access-control-allow-origin': allowOrigin(rule, request.origin),
      'access-control-allow-methods': rule.allowed.methods.join(', '),
      ...vary,
    };
    if (requested.length > 0) headers['access-control-allow-headers'] = requested.join(', ');
    if (rule.exposeHeaders?.length) headers['access-control-expose-headers'] = rule.exposeHeaders.join(', ');
    if (rule.maxAgeSeconds !== undefined) headers['access-control-max-age'] = String(rule.maxAgeSeconds);
    return { allowed: true, headers };
  }
  return { allowed: false, headers: vary };
}

/**
 * The CORS headers of an actual (non-preflight) request: those of the first rule allowing its origin
 * and method, else none but `vary` (a response that would carry them for another origin must not be
 * cached for this one). No Origin header: nothing at all, as R2 adds CORS headers only to CORS requests.
 */
export function corsActual(
  rules: readonly CorsRule[] | undefined,
  request: { origin: string | undefined; method: string },
): CorsHeaders {
  if (request.origin === undefined || !rules || rules.length === 0) return {};
  for (const rule of rules) {
    if (!originAllowed(rule, request.origin) || !methodAllowed(rule, request.method)) continue;
    const headers: CorsHeaders = {
      'access-control-allow-origin': allowOrigin(rule, request.origin),
      'access-control-allow-methods': rule.allowed.methods.join(', '),
      vary: 'Origin',
    };
    if (rule.exposeHeaders?.length) headers['access-control-expose-headers'] = rule.exposeHeaders.join(', ');
    if (rule.maxAgeSeconds !== undefined) headers['access-control-max-age'] = String(rule.maxAgeSeconds);
    return headers;
  }
  return { vary: 'Origin' };
}

/** Whether a request is a CORS preflight (OPTIONS naming the method it wants to send). */
export function isPreflight(method: string, origin: string | undefined, requestMethod: string | undefined): boolean {
  return method === 'OPTIONS' && origin !== undefined && requestMethod !== undefined;
}

function originAllowed(rule: CorsRule, origin: string): boolean {
  return rule.allowed.origins.some((pattern) => wildcardMatch(pattern, origin, false));
}

function methodAllowed(rule: CorsRule, method: string): boolean {
  return (rule.allowed.methods as readonly string[]).includes(method);
}

/** A rule that allows any origin answers `*` (as S3 does); otherwise the request's origin is echoed. */
function allowOrigin(rule: CorsRule, origin: string): string {
  return rule.allowed.origins.includes('*') ? '*' : origin;
}

function parseHeaderList(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name.length > 0);
}

/** `pattern` with `*` standing for any run of characters (none included). */
export function wildcardMatch(pattern: string, value: string, ignoreCase: boolean): boolean {
  const p = ignoreCase ? pattern.toLowerCase() : pattern;
  const v = ignoreCase ? value.toLowerCase() : value;
  const star = p.indexOf('*');
  if (star < 0) return p === v;
  const parts = p.split('*');
  const first = parts[0] ?? '';
  const last = parts[parts.length - 1] ?? '';
  if (v.length < first.length + last.length || !v.startsWith(first) || !v.endsWith(last)) return false;
  let at = first.length;
  const end = v.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = v.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}
