import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage } from '../helpers/browser.ts';
import { REPO_ROOT, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { accountSubdomain, functionsPort } from '../workers/helpers.ts';

/**
 * A to-do app on Workers KV (test/kv/todo-app: its page as static assets, its API a Worker, each to-do one key with
 * its state in the key's metadata), its namespace made and the app deployed by the real wrangler, used in Chromium.
 */
describe('a to-do app on KV, deployed with wrangler, in Chromium', () => {
  let ledge: TestLedge;
  let browser: Browser;
  let project: string;

  const wrangler = async (args: string[]) => {
    const result = await runWrangler(args, {
      apiUrl: ledge.apiUrl,
      cwd: project,
      timeoutMs: 120_000,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    return result.stdout;
  };

  beforeAll(async () => {
    ledge = await startLedge();
    browser = await launchBrowser();
    project = tempDir('kv-todo-');
    cpSync(join(REPO_ROOT, 'test/kv/todo-app'), project, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await ledge?.close();
  });

  it('adds, lists, completes and deletes to-dos, and a reload shows what was kept', async () => {
    const created = await wrangler(['kv', 'namespace', 'create', 'TODOS']);
    const namespaceId = /[0-9a-f]{32}/.exec(created)![0];
    const config = join(project, 'wrangler.jsonc');
    writeFileSync(config, readFileSync(config, 'utf8').replace('<TODOS_NAMESPACE_ID>', namespaceId));
    await wrangler(['deploy']);

    const { page, context, errors } = await openPage(browser);
    try {
      await page.goto(`http://kv-todo.${await accountSubdomain(ledge)}.localhost:${functionsPort(ledge)}/`);
      await page.getByText('0 of 0 left').waitFor();
      const titles = () => page.locator('#todos label').allTextContents();
      for (const title of ['buy milk', '<b>walk</b> the dog', 'write report']) {
        await page.getByLabel('New to-do').fill(title);
        await page.getByRole('button', { name: 'Add' }).click();
        await page.getByText(title, { exact: true }).waitFor();
      }
      expect(await titles()).toEqual(['buy milk', '<b>walk</b> the dog', 'write report']);
      expect(await page.locator('#todos b').count()).toBe(0);
      await page.getByText('3 of 3 left').waitFor();

      await page.getByRole('checkbox', { name: 'buy milk' }).check();
      await page.getByText('2 of 3 left').waitFor();
      await page.getByRole('button', { name: 'Delete <b>walk</b> the dog' }).click();
      await page.getByText('1 of 2 left').waitFor();
      expect(await titles()).toEqual(['buy milk', 'write report']);

      // A reload reads the list back from KV.
      await page.reload();
      await page.getByText('1 of 2 left').waitFor();
      expect(await titles()).toEqual(['buy milk', 'write report']);
      expect(await page.getByRole('checkbox', { name: 'buy milk' }).isChecked()).toBe(true);
      expect(await page.getByRole('checkbox', { name: 'write report' }).isChecked()).toBe(false);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }

    // What the page did is in the namespace, as wrangler lists it.
    const keys = JSON.parse(await wrangler(['kv', 'key', 'list', '--namespace-id', namespaceId, '--remote'])) as {
      name: string;
      metadata: { title: string; done: boolean };
    }[];
    expect(keys.map((key) => key.metadata)).toEqual([
      { title: 'buy milk', done: true },
      { title: 'write report', done: false },
    ]);
  }, 240_000);
});
