import type { Hono } from 'hono';
import { z } from 'zod';
import type { AccountService, Principal } from '../accounts/index.ts';
import { readJson } from '../api-kit/body.ts';
import { clientIpOf } from '../api-kit/client-ip.ts';
import type { AppEnv, ApiContext } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import { LedgeError } from '../shared/errors.ts';
import type { AccessChanges } from '../shared/grant-watch.ts';
import { assetResponse, type DashboardAssets } from './assets.ts';
import { isHttps, readCookie, SESSION_COOKIE, sessionCookie } from './cookies.ts';
import { API_RESPONSE_HEADERS, PAGE_HEADERS } from './headers.ts';
import { sameSecret, type SessionAuth, type SessionStore } from './sessions.ts';

export interface DashboardRouteDeps {
  accounts: AccountService;
  sessions: SessionStore;
  assets: () => Promise<DashboardAssets>;
  /** Told of a sign-out: the session's open live stream ends at once. */
  changes?: AccessChanges | undefined;
}

const SignIn = z.union([
  z.strictObject({ api_token: z.string().trim().min(1, 'enter an API token') }),
  z.strictObject({ email: z.string().trim().min(1), api_key: z.string().trim().min(1) }),
]);

export const DashboardErrors = {
  notSignedIn: () => new LedgeError(401, 10000, 'Not signed in to the dashboard'),
  crossOrigin: () => new LedgeError(403, 10000, 'Request from another origin refused'),
  badLink: () =>
    new LedgeError(400, 10000, 'This sign-in link was used already or has expired: run `ledge dashboard` again'),
} as const;

/** The credentials of a session in the headers' shape the API authenticates. */
export function credentialHeaders(auth: SessionAuth) {
  return 'token' in auth ? { authorization: `Bearer ${auth.token}` } : { email: auth.email, key: auth.key };
}

/**
 * The dashboard outside /client/v4: its page and assets, sign-in and sign-out, one-time sign-in links. Every
 * other thing the page does goes through /client/v4 with the session cookie standing in for the API headers.
 */
export function dashboardRoutes(root: Hono<AppEnv>, deps: DashboardRouteDeps): void {
  const { accounts, sessions } = deps;

  root.use('/client/v4/*', async (c, next) => {
    await next();
    const missing = Object.entries(API_RESPONSE_HEADERS).filter(([name]) => !c.res.headers.has(name));
    if (missing.length === 0 || c.res.status === 101) return;
    try {
      for (const [name, value] of missing) c.res.headers.set(name, value);
    } catch {
      // A response whose headers are immutable (one passed on from fetch): copied with the headers added.
      const headers = new Headers(c.res.headers);
      for (const [name, value] of missing) headers.set(name, value);
      c.res = new Response(c.res.body, { status: c.res.status, statusText: c.res.statusText, headers });
    }
  });

  const page = async (c: ApiContext) => {
    const assets = await deps.assets();
    return assetResponse(c.req.raw, assets.index, { ...PAGE_HEADERS, 'cache-control': 'no-cache' });
  };
  root.get('/', page);
  // Browsers ask for it on every first visit; an empty answer keeps their consoles quiet.
  root.get('/favicon.ico', () => new Response(null, { status: 204, headers: PAGE_HEADERS }));
  root.get('/assets/:file', async (c) => {
    const file = (await deps.assets()).files.get(c.req.param('file'));
    if (!file) return c.text('Not found', 404, PAGE_HEADERS);
    return assetResponse(c.req.raw, file, { ...PAGE_HEADERS, 'cache-control': 'public, max-age=31536000, immutable' });
  });

  root.get('/dashboard/session', async (c) => {
    const session = await sessionOf(c, sessions);
    if (!session) throw DashboardErrors.notSignedIn();
    const principal = await accounts.authenticate({ ...credentialHeaders(session.auth), clientIp: clientIpOf(c) });
    return ok(c, describe(principal, session.csrf), { status: 200 });
  });

  root.post('/dashboard/session', async (c) => {
    sameOrigin(c);
    const body = await readJson(c, SignIn, { code: 10000 });
    const auth: SessionAuth =
      'api_token' in body ? { token: body.api_token } : { email: body.email, key: body.api_key };
    // The API's own check: a wrong token gets the API's own error (401 1000, 403 9103, ...).
    const principal = await accounts.authenticate({ ...credentialHeaders(auth), clientIp: clientIpOf(c) });
    const { id, session } = await sessions.create(auth);
    c.header('set-cookie', sessionCookie(id, isHttps(c.req.raw)));
    return ok(c, describe(principal, session.csrf));
  });

  root.delete('/dashboard/session', async (c) => {
    sameOrigin(c);
    const id = readCookie(c.req.header('cookie'), SESSION_COOKIE);
    const session = id ? await sessions.get(id) : undefined;
    if (id && session) {
      requireCsrf(c, session.csrf);
      await sessions.delete(id);
      deps.changes?.notify();
    }
    c.header('set-cookie', sessionCookie('', isHttps(c.req.raw), 0));
    return ok(c, {});
  });

  // `ledge dashboard`: the CLI's own credentials (API headers) buy a link that signs a browser in once.
  root.post('/dashboard/links', async (c) => {
    const authorization = c.req.header('authorization');
    const email = c.req.header('x-auth-email');
    const key = c.req.header('x-auth-key');
    await accounts.authenticate({ authorization, email, key, clientIp: clientIpOf(c) });
    const token = authorization?.replace(/^Bearer\s+/i, '').trim();
    const auth: SessionAuth = token ? { token } : { email: email ?? '', key: key ?? '' };
    const code = await sessions.createLink(auth);
    const origin = new URL(c.req.url).origin;
    return ok(c, { url: `${origin}/dashboard/link?code=${code}`, expires_in_seconds: 300 });
  });

  // Opening a link never replaces a session silently (login CSRF: another tenant's link, opened from any site,
  // would swap the victim's session for the attacker's account). It signs in at once only when the browser says
  // the user opened it themselves (Sec-Fetch-Site: none: typed, pasted, or opened by `ledge dashboard`) and no
  // session of another user is live here; otherwise it shows whose link it is and asks, by a same-origin POST.
  root.get('/dashboard/link', async (c) => {
    const code = c.req.query('code') ?? '';
    const auth = await sessions.peekLink(code);
    if (!auth) throw DashboardErrors.badLink();
    const clientIp = clientIpOf(c);
    const linked = await accounts.authenticate({ ...credentialHeaders(auth), clientIp });
    const current = await liveUser(c, sessions, accounts);
    const openedByUser = c.req.header('sec-fetch-site') === 'none';
    if (openedByUser && (current === undefined || current.userId === linked.userId)) {
      return signInWithLink(c, code);
    }
    return new Response(confirmPage(code, linked.email, current?.email), {
      status: 200,
      headers: {
        ...PAGE_HEADERS,
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        // With no-referrer a browser sends `Origin: null` on the form's POST; same-origin keeps our own origin.
        'referrer-policy': 'same-origin',
      },
    });
  });

  // The confirmation page's form: only a page of this origin may post it (a browser always names the origin of a
  // form POST; one from another site, or none at all, is refused).
  root.post('/dashboard/link', async (c) => {
    const origin = c.req.header('origin');
    const sameSite = origin === undefined ? c.req.header('sec-fetch-site') === 'same-origin' : undefined;
    if (!(sameSite ?? hostOf(origin!) === new URL(c.req.url).host)) throw DashboardErrors.crossOrigin();
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const code = typeof form['code'] === 'string' ? form['code'] : '';
    return signInWithLink(c, code);
  });

  const signInWithLink = async (c: ApiContext, code: string) => {
    const auth = await sessions.consumeLink(code);
    if (!auth) throw DashboardErrors.badLink();
    await accounts.authenticate({ ...credentialHeaders(auth), clientIp: clientIpOf(c) });
    const { id } = await sessions.create(auth);
    return new Response(null, {
      status: 303,
      headers: { ...PAGE_HEADERS, location: '/', 'set-cookie': sessionCookie(id, isHttps(c.req.raw)) },
    });
  };
}

export async function sessionOf(c: ApiContext, sessions: SessionStore) {
  const id = readCookie(c.req.header('cookie'), SESSION_COOKIE);
  return id ? sessions.get(id) : undefined;
}

/** Browsers name the page's origin on every cross-origin write; a write from elsewhere is refused. */
export function sameOrigin(c: ApiContext): void {
  const origin = c.req.header('origin');
  if (origin !== undefined && hostOf(origin) !== new URL(c.req.url).host) throw DashboardErrors.crossOrigin();
}

export function requireCsrf(c: ApiContext, csrf: string): void {
  const sent = c.req.header('x-csrf-token') ?? '';
  if (!sameSecret(sent, csrf))
    throw new LedgeError(403, 10000, 'Missing or wrong x-csrf-token for this dashboard session');
}

/** Who the browser is signed in as now (a live session whose credential still works), if anyone. */
async function liveUser(c: ApiContext, sessions: SessionStore, accounts: AccountService) {
  const session = await sessionOf(c, sessions);
  if (!session) return undefined;
  try {
    return await accounts.authenticate({ ...credentialHeaders(session.auth), clientIp: clientIpOf(c) });
  } catch {
    return undefined;
  }
}

/** The page that asks before a link signs this browser in (no script: a form posting back to this origin). */
function confirmPage(code: string, email: string, current: string | undefined): string {
  const replacing = current
    ? `<p>This browser is signed in as <strong>${escapeHtml(current)}</strong>: continuing signs that session out.</p>`
    : '';
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in to Ledge</title></head>
<body>
<h1>Sign in to Ledge as ${escapeHtml(email)}?</h1>
${replacing}
<p>Continue only if you ran <code>ledge dashboard</code> yourself just now. A link someone else sent you signs you in to their account.</p>
<form method="post" action="/dashboard/link">
<input type="hidden" name="code" value="${escapeHtml(code)}">
<button type="submit">Sign in as ${escapeHtml(email)}</button>
</form>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function describe(principal: Principal, csrf: string) {
  return {
    email: principal.email,
    read_only: principal.readOnly,
    via: principal.via,
    account_ids: [...principal.accountIds],
    csrf_token: csrf,
  };
}

/** The host of an Origin header (scheme left out: a TLS-terminating proxy in front changes it). */
function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}
