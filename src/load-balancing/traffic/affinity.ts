import type { TrafficLoadBalancer } from './directory.ts';
import type { Target } from './steering.ts';
import type { Clock } from '../../shared/clock.ts';

/** Cloudflare's session affinity cookie. */
export const AFFINITY_COOKIE = '__cflb';
/** Cloudflare's defaults for session_affinity_ttl: 23 h for cookies, 30 min for headers. */
const DEFAULT_COOKIE_TTL_S = 82_800;
const DEFAULT_HEADER_TTL_S = 1_800;
/** Header sessions are kept in memory: bounded, the oldest dropped first. */
const MAX_HEADER_SESSIONS = 100_000;

export interface Pin {
  poolId: string;
  originName: string;
}

export type AffinityMode = 'none' | 'cookie' | 'ip_cookie' | 'header';

export function affinityMode(lb: TrafficLoadBalancer): AffinityMode {
  const mode = lb.session_affinity;
  return mode === 'cookie' || mode === 'ip_cookie' || mode === 'header' ? mode : 'none';
}

/** The cookie value: opaque to clients; a forged one can only name an origin the load balancer already has. */
export function encodePin(pin: Pin): string {
  return Buffer.from(`${pin.poolId}\n${pin.originName}`).toString('base64url');
}

export function decodePin(value: string): Pin | undefined {
  const text = Buffer.from(value, 'base64url').toString();
  const newline = text.indexOf('\n');
  if (newline <= 0 || newline === text.length - 1) return undefined;
  return { poolId: text.slice(0, newline), originName: text.slice(newline + 1) };
}

/** The __cflb value in a Cookie header, if any. */
export function cookiePin(cookie: string | undefined): Pin | undefined {
  if (!cookie || !cookie.includes(AFFINITY_COOKIE)) return undefined;
  for (const part of cookie.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === AFFINITY_COOKIE) return decodePin(part.slice(eq + 1).trim());
  }
  return undefined;
}

/**
 * Set-Cookie for a new session. session_affinity_attributes: secure Auto (default) sets Secure on HTTPS
 * requests only, Always / Never as named; samesite Auto (default) is Lax, or None when secure is Always
 * (browsers need Secure with None), as Cloudflare documents.
 */
export function affinityCookie(lb: TrafficLoadBalancer, target: Target, https: boolean): string {
  const attributes = lb.session_affinity_attributes ?? {};
  const ttl = lb.session_affinity_ttl || DEFAULT_COOKIE_TTL_S;
  const secureMode = attributes.secure ?? 'Auto';
  const secure = secureMode === 'Always' || (secureMode === 'Auto' && https);
  const sameSite =
    !attributes.samesite || attributes.samesite === 'Auto'
      ? secureMode === 'Always'
        ? 'None'
        : 'Lax'
      : attributes.samesite;
  const value = encodePin({ poolId: target.pool.id, originName: target.origin.name });
  return `${AFFINITY_COOKIE}=${value}; Path=/; Max-Age=${ttl}; HttpOnly; SameSite=${sameSite}${secure ? '; Secure' : ''}`;
}

/**
 * The session key of `header` affinity: the values of session_affinity_attributes.headers, in order.
 * Undefined (no affinity) when none is present, or when require_all_headers and one is missing.
 */
export function headerSessionKey(
  lb: TrafficLoadBalancer,
  header: (lowercaseName: string) => string | undefined,
): string | undefined {
  const names = lb.session_affinity_attributes?.headers ?? [];
  if (names.length === 0) return undefined;
  const values: string[] = [];
  let present = 0;
  for (const name of names) {
    const raw = header(name.toLowerCase());
    const value = raw ?? '';
    if (raw !== undefined) present++;
    else if (lb.session_affinity_attributes?.require_all_headers) return undefined;
    values.push(value);
  }
  return present === 0 ? undefined : `${lb.id}\n${values.join('\n')}`;
}

/** Header sessions: key -> pinned origin until the ttl runs out (in memory; a restart starts over). */
export class HeaderSessions {
  readonly #sessions = new Map<string, Pin & { expiresAt: number }>();
  readonly #clock: Clock;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  get(key: string, now = this.#clock.now()): Pin | undefined {
    const session = this.#sessions.get(key);
    if (!session) return undefined;
    if (session.expiresAt <= now) {
      this.#sessions.delete(key);
      return undefined;
    }
    return session;
  }

  set(lb: TrafficLoadBalancer, key: string, target: Target, now = this.#clock.now()): void {
    const ttl = lb.session_affinity_ttl || DEFAULT_HEADER_TTL_S;
    this.#sessions.delete(key);
    if (this.#sessions.size >= MAX_HEADER_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
    this.#sessions.set(key, { poolId: target.pool.id, originName: target.origin.name, expiresAt: now + ttl * 1000 });
  }

  clear(): void {
    this.#sessions.clear();
  }
}
