import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { origin } from './helpers.ts';

/**
 * A one-time sign-in link cannot replace someone else's session (login CSRF): opened from another site, or in a
 * browser signed in as another user, it asks first, and only a page of the dashboard's own origin can say yes.
 */
describe('one-time sign-in links', () => {
  let ledge: TestLedge;
  let browser: Browser;
  let attacker: { token: string; email: string };
  let evil: Server;
  let evilOrigin: string;
  /** What the attacker's site serves: a page that sends its visitor to `target` (or posts `code` to it). */
  let evilPage = '';

  const linkFor = async (token: string) => {
    const made = await fetch(`${origin(ledge)}/dashboard/links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    return ((await made.json()) as { result: { url: string } }).result.url;
  };

  beforeAll(async () => {
    ledge = await startLedge();
    const accounts = ledge.server.platform.accounts;
    const { user } = await accounts.createUser({ email: 'attacker@example.com' });
    const own = await accounts.createAccount({ name: 'Attacker' });
    await accounts.addMember(own.id, user.id);
    attacker = { token: (await accounts.createToken({ userId: user.id, name: 'a' })).value, email: user.email };
    // Another site: `localhost` is not the same site as the dashboard's 127.0.0.1.
    evil = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(evilPage));
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    evilOrigin = `http://localhost:${(evil.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    evil?.close();
    await ledge?.close();
  });

  it("another tenant's link opened from another site does not replace the session; the page asks, and yes works", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const whoAmI = async () => {
      const answer = await context.request.get(`${origin(ledge)}/dashboard/session`);
      return answer.ok() ? ((await answer.json()) as { result: { email: string } }).result.email : undefined;
    };
    // The victim signs in with their own link, opened by hand (Sec-Fetch-Site: none): straight in.
    await page.goto(await linkFor(ledge.apiToken));
    expect(new URL(page.url()).pathname).toBe('/');
    expect(await whoAmI()).toBe(ledge.email);

    // The attacker's page navigates the victim to the attacker's link.
    const link = await linkFor(attacker.token);
    evilPage = `<!DOCTYPE html><a id="go" href="${link}">prize</a>`;
    await page.goto(`${evilOrigin}/`);
    await page.click('#go');
    await page.getByRole('heading', { name: `Sign in to Ledge as ${attacker.email}?` }).waitFor();
    expect(await whoAmI()).toBe(ledge.email);

    // ... or posts the link's code from its own page: refused (the Origin is not the dashboard's).
    const code = new URL(link).searchParams.get('code')!;
    evilPage = `<!DOCTYPE html><form id="f" method="post" action="${origin(ledge)}/dashboard/link"><input type="hidden" name="code" value="${code}"><button id="go">prize</button></form>`;
    await page.goto(`${evilOrigin}/`);
    const [posted] = await Promise.all([page.waitForNavigation(), page.click('#go')]);
    expect(posted?.status()).toBe(403);
    expect(await whoAmI()).toBe(ledge.email);

    // The link opened by hand in a browser signed in as someone else asks too.
    await page.goto(link);
    const heading = page.getByRole('heading', { name: `Sign in to Ledge as ${attacker.email}?` });
    await heading.waitFor();
    expect(await page.getByText(`signed in as ${ledge.email}`).count()).toBe(1);
    expect(await whoAmI()).toBe(ledge.email);
    // Saying yes on the dashboard's own page signs in as the link's user, once.
    await page.getByRole('button', { name: `Sign in as ${attacker.email}` }).click();
    await page.waitForURL(`${origin(ledge)}/`);
    expect(await whoAmI()).toBe(attacker.email);
    const again = await fetch(link, { headers: { 'sec-fetch-site': 'none' } });
    expect(again.status).toBe(400);
    await context.close();
  });

  it('the confirmation POST needs the dashboard origin', async () => {
    const link = await linkFor(attacker.token);
    const code = new URL(link).searchParams.get('code')!;
    const post = (headers: Record<string, string>) =>
      fetch(`${origin(ledge)}/dashboard/link`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ code }).toString(),
      });
    expect((await post({})).status).toBe(403);
    expect((await post({ origin: 'http://evil.example' })).status).toBe(403);
    const ok = await post({ origin: origin(ledge) });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('set-cookie')).toMatch(/^ledge_session=/);
  });
});
