import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, spawnLedge, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { firstLoadScripts, origin, readOnlyToken, signIn } from './helpers.ts';

let ledge: TestLedge;
beforeAll(async () => {
  ledge = await startLedge();
});
afterAll(async () => ledge?.close());

describe('the dashboard page', () => {
  it('is served at / with a strict CSP, no framing, and only same-origin scripts', async () => {
    const response = await fetch(`${origin(ledge)}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const html = await response.text();
    // No inline script: every <script> has a src on this origin.
    for (const tag of html.match(/<script[^>]*>/g) ?? []) expect(tag).toMatch(/src="\/assets\//);
    expect(html).not.toMatch(/<script[^>]*>[^<]+<\/script>/);
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('loads under 150 KB of compressed JavaScript on the first view', async () => {
    for (const encoding of ['br', 'gzip'] as const) {
      const scripts = await firstLoadScripts(ledge, encoding);
      const total = scripts.reduce((sum, s) => sum + s.wire, 0);
      expect(scripts.length).toBeGreaterThan(0);
      expect(total).toBeGreaterThan(1000);
      expect(total).toBeLessThan(150 * 1024);
    }
  });

  it('answers unknown assets 404 and hashed assets as immutable', async () => {
    expect((await fetch(`${origin(ledge)}/assets/nope.js`)).status).toBe(404);
    const [first] = await firstLoadScripts(ledge, 'gzip');
    const response = await fetch(`${origin(ledge)}/assets/${first!.name}`);
    expect(response.headers.get('cache-control')).toContain('immutable');
    const again = await fetch(`${origin(ledge)}/assets/${first!.name}`, {
      headers: { 'if-none-match': response.headers.get('etag')! },
    });
    expect(again.status).toBe(304);
  });

  it('marks /client/v4 answers so an object opened in the browser cannot run as a page of the origin', async () => {
    const response = await fetch(`${ledge.apiUrl}/user`, { headers: ledge.tokenHeaders });
    expect(response.headers.get('content-security-policy')).toContain('sandbox');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('dashboard sessions', () => {
  it('refuses a wrong token with the API error, and sets no cookie', async () => {
    const response = await fetch(`${origin(ledge)}/dashboard/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_token: 'wrong-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('set-cookie')).toBeNull();
  });

  it('gives an HttpOnly SameSite=Strict cookie that stands in for the API headers', async () => {
    const signed = await signIn(ledge, { api_token: ledge.apiToken });
    expect(signed.setCookie).toMatch(/HttpOnly/);
    expect(signed.setCookie).toMatch(/SameSite=Strict/);
    expect(signed.setCookie).not.toContain(ledge.apiToken);
    expect(signed.session.email).toBe(ledge.email);
    expect(signed.session.read_only).toBe(false);
    const user = await fetch(`${ledge.apiUrl}/user`, { headers: { cookie: signed.cookie } });
    expect(user.status).toBe(200);
    expect(((await user.json()) as { result: { email: string } }).result.email).toBe(ledge.email);
  });

  it('signs in with a global API key and email too', async () => {
    const signed = await signIn(ledge, { email: ledge.email, api_key: ledge.apiKey });
    const accounts = await fetch(`${ledge.apiUrl}/accounts`, { headers: { cookie: signed.cookie } });
    expect(accounts.status).toBe(200);
  });

  it('refuses a write without the session CSRF token, and with a wrong one', async () => {
    const signed = await signIn(ledge, { api_token: ledge.apiToken });
    const path = `${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets`;
    const without = await fetch(path, {
      method: 'POST',
      headers: { cookie: signed.cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'csrf-none' }),
    });
    expect(without.status).toBe(403);
    const wrong = await fetch(path, {
      method: 'POST',
      headers: { cookie: signed.cookie, 'x-csrf-token': 'x'.repeat(43), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'csrf-wrong' }),
    });
    expect(wrong.status).toBe(403);
    const right = await fetch(path, {
      method: 'POST',
      headers: { cookie: signed.cookie, 'x-csrf-token': signed.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'csrf-right' }),
    });
    expect(right.status).toBe(200);
    const list = await fetch(path, { headers: ledge.tokenHeaders });
    const names = ((await list.json()) as { result: { buckets: { name: string }[] } }).result.buckets.map(
      (b) => b.name,
    );
    expect(names).toContain('csrf-right');
    expect(names).not.toContain('csrf-none');
    expect(names).not.toContain('csrf-wrong');
  });

  it('refuses a sign-in posted from another origin', async () => {
    const response = await fetch(`${origin(ledge)}/dashboard/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
      body: JSON.stringify({ api_token: ledge.apiToken }),
    });
    expect(response.status).toBe(403);
  });

  it('signs out: the cookie is cleared and the session no longer works', async () => {
    const signed = await signIn(ledge, { api_token: ledge.apiToken });
    const out = await fetch(`${origin(ledge)}/dashboard/session`, {
      method: 'DELETE',
      headers: { cookie: signed.cookie, 'x-csrf-token': signed.csrf },
    });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect((await fetch(`${origin(ledge)}/dashboard/session`, { headers: { cookie: signed.cookie } })).status).toBe(
      401,
    );
    expect((await fetch(`${ledge.apiUrl}/user`, { headers: { cookie: signed.cookie } })).status).toBe(400);
  });

  it('a read-only token reads everything and the API refuses its writes', async () => {
    const signed = await signIn(ledge, { api_token: await readOnlyToken(ledge) });
    expect(signed.session.read_only).toBe(true);
    const path = `${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets`;
    expect((await fetch(path, { headers: { cookie: signed.cookie } })).status).toBe(200);
    const write = await fetch(path, {
      method: 'POST',
      headers: { cookie: signed.cookie, 'x-csrf-token': signed.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'read-only-write' }),
    });
    expect(write.status).toBe(403);
  });
});

describe('ledge server', () => {
  it('prints the dashboard URL, where the page answers', async () => {
    const server = await spawnLedge(tempDir());
    try {
      const url = server.info['dashboard_url']!;
      expect(url).toBe(`${new URL(server.apiUrl).origin}/`);
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<script type="module" src="/assets/main-');
    } finally {
      await server.stop();
    }
  });
});

describe('ledge dashboard', () => {
  it('prints a link that signs a browser in once', async () => {
    const result = await runCli(['dashboard', '--json'], { env: cliEnv(ledge) });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const { url } = JSON.parse(result.stdout) as { url: string };
    expect(url.startsWith(`${origin(ledge)}/dashboard/link?code=`)).toBe(true);
    // What a browser sends for a link the user opened themselves (typed, pasted, or opened by the CLI).
    const byHand = { 'sec-fetch-site': 'none' };
    const first = await fetch(url, { redirect: 'manual', headers: byHand });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/');
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect(cookie).toMatch(/^ledge_session=/);
    expect((await fetch(`${origin(ledge)}/dashboard/session`, { headers: { cookie } })).status).toBe(200);
    const second = await fetch(url, { redirect: 'manual', headers: byHand });
    expect(second.status).toBe(400);
  });

  it('refuses to make a link without credentials', async () => {
    const response = await fetch(`${origin(ledge)}/dashboard/links`, { method: 'POST' });
    expect(response.status).toBe(400);
  });
});
