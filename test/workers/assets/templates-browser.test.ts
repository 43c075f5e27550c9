import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage } from '../../helpers/browser.ts';
import { fromTemplate } from '../../helpers/c3-template.ts';
import { startLedge, type TestLedge } from '../../helpers/ledge.ts';
import { runWrangler } from '../../helpers/wrangler.ts';
import { accountSubdomain, functionsPort } from '../helpers.ts';

/** create-cloudflare's own starters, deployed unchanged by the real wrangler and used in Chromium. */
describe("create-cloudflare's assets templates in Chromium", () => {
  let ledge: TestLedge;
  let browser: Browser;
  const deploy = async (project: string) => {
    const result = await runWrangler(['deploy'], {
      apiUrl: ledge.apiUrl,
      cwd: project,
      timeoutMs: 120_000,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
  };
  const url = async (script: string, path: string) =>
    `http://${script}.${await accountSubdomain(ledge)}.localhost:${functionsPort(ledge)}${path}`;

  beforeAll(async () => {
    ledge = await startLedge();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await ledge?.close();
  });

  it('hello-world-with-assets: the page from public/ calls the worker for /message and /random', async () => {
    await deploy(fromTemplate('hello-world-with-assets/js', 'hello-assets'));
    const { page, context, errors } = await openPage(browser);
    try {
      await page.goto(await url('hello-assets', '/'));
      await expect.poll(() => page.textContent('#heading'), { timeout: 30_000 }).toBe('Hello, World!');
      await page.click('#button');
      await expect
        .poll(() => page.textContent('#random'), { timeout: 30_000 })
        .toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      // Neither an asset nor a route of the worker: the worker's own 404.
      const missing = await page.goto(await url('hello-assets', '/nothing-here'));
      expect([missing?.status(), await missing?.text()]).toEqual([404, 'Not Found']);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('hello-world-assets-only: the static page is served, with no worker at all', async () => {
    const project = fromTemplate('hello-world-assets-only/templates', 'hello-static');
    await deploy(project);
    const { page, context, errors } = await openPage(browser);
    try {
      const response = await page.goto(await url('hello-static', '/'));
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-type']).toMatch(/^text\/html/);
      expect(await page.title()).toBe(
        /<title>([^<]*)<\/title>/.exec(readFileSync(join(project, 'public/index.html'), 'utf8'))?.[1],
      );
      // Without not_found_handling an unknown path is an empty 404 (Chromium shows its own error page for it).
      const missing = await page.evaluate(async () => {
        const response = await fetch('/nothing-here');
        return [response.status, await response.text()];
      });
      expect(missing).toEqual([404, '']);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
