import { describe, expect, it } from 'vitest';
import { assertCorsRules, corsActual, corsPreflight, CorsPutSchema, type CorsRule } from '../../src/storage/index.ts';

const rules: CorsRule[] = [
  {
    id: 'app',
    allowed: { origins: ['https://app.example'], methods: ['GET', 'PUT'], headers: ['content-type', 'x-amz-*'] },
    exposeHeaders: ['ETag', 'Content-Length'],
    maxAgeSeconds: 3600,
  },
  { id: 'subdomains', allowed: { origins: ['https://*.cdn.example'], methods: ['GET', 'HEAD'] } },
  { id: 'anyone-reads', allowed: { origins: ['*'], methods: ['GET'] } },
];

describe('CORS preflight', () => {
  it('answers the first rule allowing origin, method and every requested header', () => {
    const answer = corsPreflight(rules, {
      origin: 'https://app.example',
      method: 'PUT',
      requestHeaders: 'Content-Type, X-Amz-Date,x-amz-content-sha256',
    });
    expect(answer).toEqual({
      allowed: true,
      headers: {
        'access-control-allow-origin': 'https://app.example',
        'access-control-allow-methods': 'GET, PUT',
        'access-control-allow-headers': 'content-type, x-amz-date, x-amz-content-sha256',
        'access-control-expose-headers': 'ETag, Content-Length',
        'access-control-max-age': '3600',
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      },
    });
  });

  it('refuses a header no rule allows, a method no rule allows, and an unknown origin', () => {
    const refused = (origin: string, method: string, requestHeaders?: string) =>
      corsPreflight(rules, { origin, method, requestHeaders }).allowed;
    expect(refused('https://app.example', 'PUT', 'x-user-id')).toBe(false);
    expect(refused('https://app.example', 'DELETE')).toBe(false);
    expect(refused('https://evil.example', 'PUT')).toBe(false);
    // Origins match exactly: no trailing slash, scheme and port count.
    expect(refused('http://app.example', 'PUT')).toBe(false);
    expect(refused('https://app.example:8443', 'PUT')).toBe(false);
    expect(corsPreflight(undefined, { origin: 'https://app.example', method: 'GET' }).allowed).toBe(false);
  });

  it('matches wildcard origins, and answers * for a rule open to every origin', () => {
    const sub = corsPreflight(rules, { origin: 'https://img.cdn.example', method: 'HEAD' });
    expect(sub.allowed && sub.headers['access-control-allow-origin']).toBe('https://img.cdn.example');
    expect(corsPreflight(rules, { origin: 'https://cdn.example', method: 'HEAD' }).allowed).toBe(false);
    const any = corsPreflight(rules, { origin: 'https://elsewhere.example', method: 'GET' });
    expect(any).toMatchObject({ allowed: true, headers: { 'access-control-allow-origin': '*' } });
  });
});

describe('CORS on an actual request', () => {
  it('adds the matching rule headers, only Vary when no rule matches, nothing without Origin', () => {
    expect(corsActual(rules, { origin: 'https://app.example', method: 'GET' })).toEqual({
      'access-control-allow-origin': 'https://app.example',
      'access-control-allow-methods': 'GET, PUT',
      'access-control-expose-headers': 'ETag, Content-Length',
      'access-control-max-age': '3600',
      vary: 'Origin',
    });
    expect(corsActual(rules, { origin: 'https://evil.example', method: 'PUT' })).toEqual({ vary: 'Origin' });
    expect(corsActual(rules, { origin: undefined, method: 'GET' })).toEqual({});
    expect(corsActual(undefined, { origin: 'https://app.example', method: 'GET' })).toEqual({});
  });
});

describe('CORS rule validation', () => {
  const rule = (origins: string[], extra: Partial<CorsRule> = {}): CorsRule => ({
    allowed: { origins, methods: ['GET'] },
    ...extra,
  });
  it('accepts origins, * and one-wildcard patterns', () => {
    expect(() =>
      assertCorsRules([rule(['*', 'http://localhost:3000', 'https://*.example.com', 'http://[::1]:8080'])]),
    ).not.toThrow();
  });
  it.each([
    ['https://example.com/', /must not have a path/],
    ['https://example.com/fonts/a.woff2', /must not have a path/],
    ['example.com', /is not an origin/],
    ['https://*.*.example.com', /at most one \* wildcard/],
    ['https://example.com:99999', /invalid port/],
    ['https://user@example.com', /user information/],
  ])('refuses the origin %s', (origin, message) => {
    expect(() => assertCorsRules([rule([origin])])).toThrow(message);
  });
  it('refuses bad header names and repeated methods; the schema refuses unknown methods and ages', () => {
    expect(() => assertCorsRules([rule(['*'], { exposeHeaders: ['bad header'] })])).toThrow(/not a header name/);
    expect(() => assertCorsRules([{ allowed: { origins: ['*'], methods: ['GET', 'GET'] } }])).toThrow(/repeat/);
    const parse = (body: unknown) => CorsPutSchema.safeParse(body).success;
    expect(parse({ rules: [{ allowed: { origins: ['*'], methods: ['PATCH'] } }] })).toBe(false);
    expect(parse({ rules: [{ allowed: { origins: ['*'], methods: ['GET'] }, maxAgeSeconds: 86_401 }] })).toBe(false);
    expect(parse({ rules: [{ allowed: { origins: [], methods: ['GET'] } }] })).toBe(false);
    expect(parse({ rules: [{ allowed: { origins: ['*'], methods: ['GET'] }, maxAgeSeconds: 86_400 }] })).toBe(true);
  });
});
