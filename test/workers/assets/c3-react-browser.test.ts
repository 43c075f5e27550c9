import { cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage } from '../../helpers/browser.ts';
import { cleanEnv, REPO_ROOT, startLedge, tempDir, type TestLedge } from '../../helpers/ledge.ts';
import { runAs } from '../../helpers/user-shell.ts';
import { runWrangler } from '../../helpers/wrangler.ts';
import { accountSubdomain, functionsPort } from '../helpers.ts';

const MODULES = join(REPO_ROOT, 'node_modules');

async function node(cwd: string, args: string[]): Promise<void> {
  const result = await runAs(process.execPath, args, { cwd, env: { ...cleanEnv(), CI: 'true' }, timeoutMs: 120_000 });
  if (result.code !== 0) throw new Error(`${args.join(' ')}: ${result.stdout}${result.stderr}`);
}

/**
 * create-cloudflare's React framework starter (templates/react/workers, JavaScript variant), made as
 * `npm create cloudflare -- --framework=react` makes it: create-vite's React template, c3's files over it (its
 * App, a Worker answering /api/, wrangler.jsonc with single-page-application), and `cloudflare()` of
 * @cloudflare/vite-plugin added to the Vite config's plugins; then `vite build`, which writes the client files
 * and the Worker with the wrangler config that `wrangler deploy` is redirected to. Every package is one of the
 * repo's devDependencies: nothing is fetched.
 */
async function buildC3ReactStarter(): Promise<string> {
  const parent = tempDir('c3-react-');
  await node(parent, [
    join(MODULES, 'create-vite/index.js'),
    'app',
    '--template',
    'react',
    '--no-immediate',
    '--no-interactive',
  ]);
  const project = join(parent, 'app');
  cpSync(join(MODULES, 'create-cloudflare/templates/react/workers/js'), project, { recursive: true });
  const configPath = join(project, 'wrangler.jsonc');
  writeFileSync(
    configPath,
    readFileSync(configPath, 'utf8').replace('<WORKER_NAME>', 'c3-react').replace('<COMPATIBILITY_DATE>', '2025-06-01'),
  );
  // c3's configure step (a codemod of vite.config.js): the plugin's import, and cloudflare() in `plugins`.
  const vitePath = join(project, 'vite.config.js');
  const viteConfig = readFileSync(vitePath, 'utf8');
  const withPlugin = viteConfig
    .replace(
      "import { defineConfig } from 'vite'",
      "import { defineConfig } from 'vite'\nimport { cloudflare } from '@cloudflare/vite-plugin'",
    )
    .replace('plugins: [react()]', 'plugins: [react(), cloudflare()]');
  if (!withPlugin.includes('cloudflare()') || !withPlugin.includes("from '@cloudflare/vite-plugin'"))
    throw new Error(`create-vite's vite.config.js changed; c3's codemod step needs updating:\n${viteConfig}`);
  writeFileSync(vitePath, withPlugin);
  symlinkSync(MODULES, join(project, 'node_modules'));
  await node(project, [join(MODULES, 'vite/bin/vite.js'), 'build']);
  return project;
}

/** The framework starter deployed by the real wrangler (Worker and assets) and used in Chromium. */
describe("create-cloudflare's React starter (Vite + @cloudflare/vite-plugin) in Chromium", () => {
  let ledge: TestLedge;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    const [project, started] = await Promise.all([buildC3ReactStarter(), startLedge()]);
    ledge = started;
    const deployed = await runWrangler(['deploy'], {
      apiUrl: ledge.apiUrl,
      cwd: project,
      timeoutMs: 120_000,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });
    expect(deployed.code, deployed.stdout + deployed.stderr).toBe(0);
    base = `http://c3-react.${await accountSubdomain(ledge)}.localhost:${functionsPort(ledge)}`;
    browser = await launchBrowser();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await ledge?.close();
  });

  it('serves the app, whose button asks the Worker at /api/, and a deep link reloads into the app', async () => {
    const { page, context, errors } = await openPage(browser);
    try {
      expect((await page.goto(`${base}/`))?.status()).toBe(200);
      await expect.poll(() => page.textContent('h1'), { timeout: 30_000 }).toBe('Get started with Cloudflare');
      await page.click('button[aria-label="get name"]');
      await expect.poll(() => page.textContent('button[aria-label="get name"]')).toBe('Name from API is: Cloudflare');
      // A navigation to a path that is no file: single-page-application answers the app's index.html.
      const deep = await page.goto(`${base}/settings/profile`);
      expect(deep?.status()).toBe(200);
      await expect.poll(() => page.textContent('h1'), { timeout: 30_000 }).toBe('Get started with Cloudflare');
      // Not a navigation and no file: the Worker answers, with its own empty 404.
      const missing = await page.evaluate(async () => {
        const response = await fetch('/no-such-file.json');
        return [response.status, await response.text()];
      });
      expect(missing).toEqual([404, '']);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
