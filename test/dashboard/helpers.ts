import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchBrowser, openPage, type PageWatch } from '../helpers/browser.ts';
import type { TestLedge } from '../helpers/ledge.ts';

/** The dashboard's origin (the API port's root). */
export function origin(ledge: TestLedge): string {
  return new URL(ledge.apiUrl).origin;
}

export interface SignedIn {
  cookie: string;
  csrf: string;
  setCookie: string;
  session: { email: string; read_only: boolean; csrf_token: string; account_ids: string[] };
}

/** Signs in as the page does (POST /dashboard/session) and returns the cookie and CSRF token. */
export async function signIn(ledge: TestLedge, body: Record<string, string>): Promise<SignedIn> {
  const response = await fetch(`${origin(ledge)}/dashboard/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: origin(ledge) },
    body: JSON.stringify(body),
  });
  const envelope = (await response.json()) as { success: boolean; result: SignedIn['session']; errors: unknown[] };
  if (!envelope.success) throw new Error(`sign-in failed (${response.status}): ${JSON.stringify(envelope.errors)}`);
  const setCookie = response.headers.get('set-cookie') ?? '';
  return { cookie: setCookie.split(';')[0]!, csrf: envelope.result.csrf_token, setCookie, session: envelope.result };
}

/** A read-only API token of the test user, made through the accounts service (as `ledge admin` does). */
export async function readOnlyToken(ledge: TestLedge): Promise<string> {
  const accounts = ledge.server.platform.accounts;
  const principal = await accounts.authenticate({ authorization: `Bearer ${ledge.apiToken}` });
  const { value } = await accounts.createToken({ userId: principal.userId, name: 'viewer', readOnly: true });
  return value;
}

/**
 * The JavaScript the first page view loads: the entry script named in the page and every chunk it imports
 * statically (not the `import()`ed ones, which load when a view needs them), as compressed bytes on the wire.
 */
export async function firstLoadScripts(
  ledge: TestLedge,
  encoding: 'br' | 'gzip',
): Promise<{ name: string; wire: number; raw: number }[]> {
  const base = origin(ledge);
  const html = await (await fetch(`${base}/`)).text();
  const entry = /<script type="module" src="\/assets\/([^"]+)"/.exec(html)?.[1];
  if (!entry) throw new Error(`no entry script in the page: ${html}`);
  const seen = new Map<string, { name: string; wire: number; raw: number }>();
  const queue = [entry];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    const response = await fetch(`${base}/assets/${name}`, { headers: { 'accept-encoding': encoding } });
    if (response.headers.get('content-encoding') !== encoding) throw new Error(`${name} not sent as ${encoding}`);
    const wire = Number(response.headers.get('content-length'));
    const code = await response.text();
    seen.set(name, { name, wire, raw: Buffer.byteLength(code) });
    // Static imports only: `import{a}from"./chunk-X.js"` / `import"./chunk-X.js"`, not `import("./chunk-X.js")`.
    for (const match of code.matchAll(/(?:from|import)\s*"\.\/([^"]+\.js)"/g)) queue.push(match[1]!);
  }
  return [...seen.values()];
}

/**
 * The preamble of a browser test file: `start` starts its Ledge (the file keeps it in a variable of its own),
 * then Chromium starts; after the file every page opened here is closed, then the browser and the Ledge.
 * `page()` opens a page; `signedInPage(token)` also logs in with `token` (default the test user's) as a
 * person does and waits for the Overview.
 */
export function browserFixture(start: () => Promise<TestLedge>): {
  page(): Promise<PageWatch>;
  signedInPage(token?: string): Promise<PageWatch>;
} {
  let ledge: TestLedge | undefined;
  let browser: Browser | undefined;
  const watches: PageWatch[] = [];
  beforeAll(async () => {
    ledge = await start();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    for (const watch of watches) await watch.context.close().catch(() => undefined);
    await browser?.close();
    await ledge?.close();
  });
  const page = async () => {
    const watch = await openPage(browser!);
    watches.push(watch);
    return watch;
  };
  return {
    page,
    async signedInPage(token = ledge!.apiToken) {
      const watch = await page();
      await watch.page.goto(`${origin(ledge!)}/`);
      await watch.page.getByLabel('API token').fill(token);
      await watch.page.getByRole('button', { name: 'Log in' }).click();
      await watch.page.getByRole('heading', { name: 'Overview' }).waitFor();
      return watch;
    },
  };
}
