import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The HS256 JSON Web Tokens of R2's temporary credentials (RFC 7519 with the one algorithm R2 uses).
 * The key is the parent's secret access key as text, as R2's client-side signing example uses it.
 */
export type JwtClaims = Record<string, unknown>;

const HEADER = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

export function signJwt(claims: JwtClaims, key: string): string {
  const body = `${HEADER}.${base64url(JSON.stringify(claims))}`;
  return `${body}.${mac(body, key)}`;
}

/** The token's claims if it is a well-formed HS256 token signed with `key`; undefined otherwise. */
export function verifyJwt(jwt: string, key: string): JwtClaims | undefined {
  const parts = jwt.split('.');
  if (parts.length !== 3) return undefined;
  const [header, payload, signature] = parts as [string, string, string];
  // Only HS256: a token may not pick its own algorithm ("none", or an asymmetric one keyed with our secret).
  const parsedHeader = parseJson(header);
  if (!parsedHeader || parsedHeader['alg'] !== 'HS256') return undefined;
  const expected = Buffer.from(mac(`${header}.${payload}`, key), 'base64url');
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return parseJson(payload);
}

/** The claims without checking the signature: only to learn which key should check it. */
export function unverifiedClaims(jwt: string): JwtClaims | undefined {
  const payload = jwt.split('.')[1];
  return payload === undefined ? undefined : parseJson(payload);
}

function mac(data: string, key: string): string {
  return createHmac('sha256', Buffer.from(key, 'utf8')).update(data, 'utf8').digest('base64url');
}

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

function parseJson(part: string): JwtClaims | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JwtClaims) : undefined;
  } catch {
    return undefined;
  }
}
