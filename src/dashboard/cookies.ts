export const SESSION_COOKIE = 'ledge_session';

/** The value of one cookie in a Cookie header. */
export function readCookie(header: string | null | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it), Secure when
 * the dashboard is reached over HTTPS (directly or through a proxy that says so).
 */
export function sessionCookie(value: string, secure: boolean, maxAgeSeconds?: number): string {
  const parts = [`${SESSION_COOKIE}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Strict'];
  if (secure) parts.push('Secure');
  if (maxAgeSeconds !== undefined) parts.push(`Max-Age=${maxAgeSeconds}`);
  return parts.join('; ');
}

export function isHttps(request: Request): boolean {
  return new URL(request.url).protocol === 'https:' || request.headers.get('x-forwarded-proto') === 'https';
}
