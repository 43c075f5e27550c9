/**
 * The dashboard's Content-Security-Policy: scripts and styles only from its own bundled files (no inline script,
 * no eval), requests only to this origin, and no framing (clickjacking).
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers on every dashboard page and asset. */
export const PAGE_HEADERS: Record<string, string> = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

/**
 * On /client/v4 answers: the dashboard shares the API's origin, so an object stored as text/html and opened
 * from it must not run as a page of that origin. A sandboxed document with no sources can run nothing; API
 * clients ignore these headers.
 */
export const API_RESPONSE_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'none'; sandbox; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
};
