import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage } from '../../helpers/browser.ts';
import { cleanEnv, REPO_ROOT, startLedge, tempDir, type TestLedge } from '../../helpers/ledge.ts';
import { runAs } from '../../helpers/user-shell.ts';
import { runWrangler } from '../../helpers/wrangler.ts';
import { accountSubdomain, functionsPort } from '../helpers.ts';

/**
 * The app's entry with client-side routes, as a developer adds them to Vite's React starter: react-router's
 * BrowserRouter, the starter's own page at `/`, two more routes, links between them.
 */
const MAIN_WITH_ROUTES = `import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { BrowserRouter, Link, Route, Routes, useParams } from 'react-router'
import './index.css'
import App from './App.jsx'

function About() {
  return <h2 id="about">About this app</h2>
}

function User() {
  const { id } = useParams()
  return <h2 id="user">User {id}</h2>
}

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <BrowserRouter>
      <nav>
        <Link to="/" id="nav-home">Home</Link> <Link to="/about" id="nav-about">About</Link>{' '}
        <Link to="/users/42" id="nav-user">User 42</Link>
      </nav>
      <Routes>
        <Route path="/" element={<App />} />
        <Route path="/about" element={<About />} />
        <Route path="/users/:id" element={<User />} />
      </Routes>
    </BrowserRouter>
  </StrictMode>,
)
`;

/** Runs a Node CLI of the repo's node_modules with the pinned Node; fails the test with its output. */
async function node(cwd: string, args: string[]): Promise<string> {
  const result = await runAs(process.execPath, args, { cwd, env: { ...cleanEnv(), CI: 'true' }, timeoutMs: 120_000 });
  if (result.code !== 0) throw new Error(`${args.join(' ')}: ${result.stdout}${result.stderr}`);
  return result.stdout;
}

/**
 * `npm create vite` (create-vite from npm, React template), client-side routes added, built by Vite once for the
 * file; its packages are the repo's own devDependencies, so nothing is fetched.
 */
async function buildViteReactSpa(): Promise<string> {
  const parent = tempDir('vite-spa-');
  await node(parent, [
    join(REPO_ROOT, 'node_modules/create-vite/index.js'),
    'spa',
    '--template',
    'react',
    '--no-immediate',
    '--no-interactive',
  ]);
  const project = join(parent, 'spa');
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(project, 'node_modules'));
  writeFileSync(join(project, 'src/main.jsx'), MAIN_WITH_ROUTES);
  await node(project, [join(REPO_ROOT, 'node_modules/vite/bin/vite.js'), 'build']);
  writeFileSync(
    join(project, 'wrangler.jsonc'),
    JSON.stringify({
      name: 'vite-spa',
      compatibility_date: '2025-06-01',
      assets: { directory: './dist', not_found_handling: 'single-page-application' },
    }),
  );
  return project;
}

/** A Vite React single-page app deployed by the real wrangler as an assets-only site, used in Chromium. */
describe('a Vite React SPA (npm create vite) in Chromium', () => {
  let ledge: TestLedge;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    const [project, started] = await Promise.all([buildViteReactSpa(), startLedge()]);
    ledge = started;
    const deployed = await runWrangler(['deploy'], {
      apiUrl: ledge.apiUrl,
      cwd: project,
      timeoutMs: 120_000,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });
    expect(deployed.code, deployed.stdout + deployed.stderr).toBe(0);
    base = `http://vite-spa.${await accountSubdomain(ledge)}.localhost:${functionsPort(ledge)}`;
    browser = await launchBrowser();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await ledge?.close();
  });

  it("runs the starter's page: its hashed script, styles and image load, and React answers a click", async () => {
    const { page, context, errors } = await openPage(browser);
    try {
      const response = await page.goto(`${base}/`);
      expect(response?.status()).toBe(200);
      await expect.poll(() => page.textContent('h1'), { timeout: 30_000 }).toBe('Get started');
      await page.click('button.counter');
      await expect.poll(() => page.textContent('button.counter')).toBe('Count is 1');
      // The hero image (a hashed file under /assets/) decoded; the stylesheet applied (the template's #center).
      expect(
        await page.$eval('img.base', (img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      ).toBeGreaterThan(0);
      expect(
        await page.$eval(
          '#center',
          (el) =>
            (globalThis as unknown as { getComputedStyle(e: unknown): { display: string } }).getComputedStyle(el)
              .display,
        ),
      ).toBe('flex');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('follows client-side routes without reloading, and serves a deep link and its reload', async () => {
    const { page, context, errors } = await openPage(browser);
    try {
      await page.goto(`${base}/`);
      await expect.poll(() => page.textContent('h1'), { timeout: 30_000 }).toBe('Get started');
      await page.evaluate(() => ((globalThis as unknown as { loadedOnce: boolean }).loadedOnce = true));
      await page.click('#nav-about');
      await expect.poll(() => page.textContent('#about')).toBe('About this app');
      expect(new URL(page.url()).pathname).toBe('/about');
      await page.click('#nav-user');
      await expect.poll(() => page.textContent('#user')).toBe('User 42');
      // Still the same document: the router moved, the browser did not load a page.
      expect(await page.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce)).toBe(true);
      await page.goBack();
      await expect.poll(() => page.textContent('#about')).toBe('About this app');

      // A deep link: no file is /users/7, so single-page-application answers index.html and the router renders.
      const deep = await page.goto(`${base}/users/7`);
      expect(deep?.status()).toBe(200);
      await expect.poll(() => page.textContent('#user'), { timeout: 30_000 }).toBe('User 7');
      const reloaded = await page.reload();
      expect(reloaded?.status()).toBe(200);
      await expect.poll(() => page.textContent('#user'), { timeout: 30_000 }).toBe('User 7');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
