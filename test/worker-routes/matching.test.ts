import { describe, expect, it } from 'vitest';
import { parseRoutePattern, WorkerRouteTable, type RouteEntry } from '../../src/worker-routes/index.ts';

const route = (pattern: string, script: string | null = pattern): RouteEntry => ({ pattern, accountId: 'a', script });
const served = (table: WorkerRouteTable, host: string, target: string, https = false) =>
  table.match(host, target, https)?.script;

describe('worker routes: pattern validity (Cloudflare "Validity")', () => {
  it.each([
    ['example.com', { host: 'example.com', hostWildcard: 'none', path: '/', pathWildcard: false }],
    ['*example.com/*', { host: 'example.com', hostWildcard: 'any', path: '/', pathWildcard: true }],
    ['*.Example.COM/Images/*', { host: 'example.com', hostWildcard: 'sub', path: '/Images/', pathWildcard: true }],
    ['https://api.example.com/v1', { scheme: 'https', host: 'api.example.com', path: '/v1', pathWildcard: false }],
  ])('accepts %s', (pattern, expected) => {
    expect(parseRoutePattern(pattern)).toMatchObject(expected);
  });

  it('keeps the path case and lowercases the host in the stored pattern', () => {
    expect(parseRoutePattern('HTTP://WWW.Example.com/Images/*')).toMatchObject({
      text: 'http://www.example.com/Images/*',
    });
  });

  it.each([
    ['example.com/*.jpg', /only be its last character/],
    ['example.com/?foo=*', /query string/],
    ['www.*.example.com/*', /first character/],
    ['ex*ample.com/*', /first character/],
    ['example.com:8080/*', /no port/],
    ['ftp://example.com/*', /http:\/\/ or https:\/\//],
    ['', /empty/],
    ['exa mple.com/*', /spaces/],
    ['-bad-.example.com/*', /not a valid hostname/],
    ['*/*', /not a valid hostname/],
  ])('refuses %s', (pattern, problem) => {
    const parsed = parseRoutePattern(pattern);
    expect('problem' in parsed && parsed.problem).toMatch(problem);
  });
});

describe('worker routes: matching (Cloudflare "Matching behavior")', () => {
  it('the most specific pattern wins: an exact host before a wildcard one, a longer path before a shorter', () => {
    const table = new WorkerRouteTable(
      [route('*.example.com/*'), route('www.example.com/*'), route('example.com/*'), route('example.com/hello/*')],
      [],
    );
    expect(served(table, 'www.example.com', '/')).toBe('www.example.com/*');
    expect(served(table, 'shop.example.com', '/a')).toBe('*.example.com/*');
    expect(served(table, 'example.com', '/hello/world')).toBe('example.com/hello/*');
    expect(served(table, 'example.com', '/other')).toBe('example.com/*');
  });

  it('`*host` matches the host and anything ending in it; `*.host` only subhosts', () => {
    const any = new WorkerRouteTable([route('*example.com/*')], []);
    expect(served(any, 'example.com', '/')).toBe('*example.com/*');
    expect(served(any, 'www.example.com', '/path')).toBe('*example.com/*');
    expect(served(any, 'myexample.com', '/')).toBe('*example.com/*');
    expect(served(any, 'not-example.org', '/')).toBeUndefined();
    const sub = new WorkerRouteTable([route('*.example.com/*')], []);
    expect(served(sub, 'example.com', '/')).toBeUndefined();
    expect(served(sub, 'www.example.com', '/path')).toBe('*.example.com/*');
    expect(served(sub, 'myexample.com', '/')).toBeUndefined();
    // Both apply: the subhost wildcard is the more specific of the two.
    const both = new WorkerRouteTable([route('*example.com/*'), route('*.example.com/*')], []);
    expect(served(both, 'a.example.com', '/')).toBe('*.example.com/*');
    expect(served(both, 'example.com', '/')).toBe('*example.com/*');
  });

  it('reads the whole URL: an exact path does not match with a query string, a trailing * does', () => {
    const table = new WorkerRouteTable([route('example.com/images/cat.png'), route('example.com/path*')], []);
    expect(served(table, 'example.com', '/images/cat.png')).toBe('example.com/images/cat.png');
    expect(served(table, 'example.com', '/images/cat.png?foo=bar')).toBeUndefined();
    expect(served(table, 'example.com', '/path')).toBe('example.com/path*');
    expect(served(table, 'example.com', '/path2')).toBe('example.com/path*');
    expect(served(table, 'example.com', '/path/readme.txt?x=1')).toBe('example.com/path*');
    expect(served(table, 'example.com', '/Path')).toBeUndefined();
    // A pattern without a path is the path "/" exactly.
    expect(served(new WorkerRouteTable([route('example.com')], []), 'example.com', '/')).toBe('example.com');
    expect(served(new WorkerRouteTable([route('example.com')], []), 'example.com', '/a')).toBeUndefined();
  });

  it('a route without a script negates less specific ones', () => {
    const table = new WorkerRouteTable(
      [route('*example.com/images/cat.png', null), route('*example.com/images/*', 'worker-script')],
      [],
    );
    expect(served(table, 'example.com', '/images/dog.png')).toBe('worker-script');
    expect(served(table, 'example.com', '/images/cat.png')).toBeUndefined();
    expect(served(table, 'example.com', '/images/cat.png?foo=bar')).toBe('worker-script');
  });

  it('a pattern that names a scheme matches only it', () => {
    const table = new WorkerRouteTable([route('https://example.com/*'), route('http://example.com/*')], []);
    expect(served(table, 'example.com', '/', true)).toBe('https://example.com/*');
    expect(served(table, 'example.com', '/', false)).toBe('http://example.com/*');
  });

  it('routes run before a Custom Domain on the same hostname; the domain takes every other path', () => {
    const table = new WorkerRouteTable(
      [route('app.example.com/log/*', 'logger'), route('app.example.com/skip', null)],
      [{ hostname: 'app.example.com', accountId: 'a', script: 'app' }],
    );
    expect(served(table, 'app.example.com', '/log/x')).toBe('logger');
    expect(served(table, 'app.example.com', '/anything?q')).toBe('app');
    // Past Workers routes, the Custom Domain is still the origin.
    expect(served(table, 'app.example.com', '/skip')).toBe('app');
    expect(served(table, 'other.example.com', '/')).toBeUndefined();
  });

  it('reads the path of an absolute-form target, and matches nothing for `*`', () => {
    const table = new WorkerRouteTable([route('example.com/a*')], []);
    expect(served(table, 'example.com', 'http://example.com/abc')).toBe('example.com/a*');
    expect(served(table, 'example.com', '*')).toBeUndefined();
  });

  it('gives one target object per script, so the data plane can keep what it builds for it', () => {
    const table = new WorkerRouteTable(
      [route('a.example.com/*', 's'), route('b.example.com/*', 's')],
      [{ hostname: 'c.example.com', accountId: 'a', script: 's' }],
    );
    const first = table.match('a.example.com', '/', false);
    expect(table.match('b.example.com', '/', false)).toBe(first);
    expect(table.match('c.example.com', '/', false)).toBe(first);
  });

  it('names the hostnames it serves by name (for certificates): exact route hosts and Custom Domains', () => {
    const table = new WorkerRouteTable(
      [route('a.example.com/*'), route('*.example.com/*'), route('https://b.example.com/x')],
      [{ hostname: 'c.example.com', accountId: 'a', script: 's' }],
    );
    expect(table.hostnames()).toEqual(['a.example.com', 'b.example.com', 'c.example.com']);
  });
});
