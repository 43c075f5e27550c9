import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { seriousViolations } from '../helpers/browser.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { browserFixture, origin, readOnlyToken } from './helpers.ts';
import { screenshot } from './shots.ts';

let ledge: TestLedge;
const { signedInPage } = browserFixture(async () => (ledge = await startLedge()));

const api = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
  fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}${path}`, {
    method,
    body,
    headers: { ...ledge.tokenHeaders, ...headers },
  });

describe('dashboard in Chromium: sign-in and object storage', () => {
  it('signs in with an API token, keeps it out of page storage, and signs out', async () => {
    const { page, errors } = await signedInPage();
    const stored = await page.evaluate(
      () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
    );
    expect(stored).not.toContain(ledge.apiToken);
    // HttpOnly: the page's script cannot read the session cookie.
    expect(await page.evaluate('document.cookie')).toBe('');
    await screenshot(page, 'overview');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    expect(errors).toEqual([]);
  });

  it('creates a bucket, uploads 20 MiB in parts (and 3 MiB in one PUT) with progress, downloads the same bytes, deletes with confirmation', async () => {
    const { page, errors } = await signedInPage();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'R2 Object Storage' }).click();
    await page.getByLabel('Bucket name').fill('browser-bucket');
    await page.getByRole('button', { name: 'Create bucket' }).click();
    await page.getByRole('heading', { name: 'Bucket browser-bucket' }).waitFor();

    // Every value the upload's progress bar takes, as the page sets it.
    await page.evaluate(`(() => {
      const seen = [];
      window.progressSeen = seen;
      // The 20 MiB file's bar only (the small file's moves at the same time).
      const big = (node) => node instanceof HTMLProgressElement && node.getAttribute('aria-label') === 'Upload of big.bin';
      new MutationObserver((records) => {
        for (const record of records) {
          if (big(record.target)) seen.push(record.target.value / record.target.max);
          for (const node of record.addedNodes)
            if (node instanceof HTMLElement) node.querySelectorAll('progress').forEach((p) => big(p) && seen.push(p.value / p.max));
        }
      }).observe(document.querySelector('.uploads'), { subtree: true, childList: true, attributes: true, attributeFilter: ['value'] });
    })()`);
    const bytes = randomBytes(20 * 1024 * 1024);
    const small = randomBytes(3 * 1024 * 1024);
    const writes: string[] = [];
    page.on('request', (request) => {
      if (request.method() !== 'GET') writes.push(`${request.method()} ${new URL(request.url()).pathname}`);
    });
    await page.getByLabel('Upload files').setInputFiles([
      { name: 'big.bin', mimeType: 'application/octet-stream', buffer: bytes },
      { name: 'small.bin', mimeType: 'application/octet-stream', buffer: small },
    ]);
    for (const name of ['big.bin', 'small.bin'])
      await page
        .locator('.uploads li', { hasText: name })
        .getByText('Uploaded', { exact: true })
        .waitFor({ timeout: 60_000 });
    // Above the 8 MiB threshold: Ledge's multipart routes, parts of 8 MiB (8 + 8 + 4), then complete; below it one PUT.
    const uploads = `/client/v4/accounts/${ledge.accountId}/r2/buckets/browser-bucket/uploads`;
    expect(writes.filter((w) => w === `POST ${uploads}`)).toHaveLength(1);
    expect(writes.filter((w) => /^PUT .*\/uploads\/[^/]+\/parts\/[123]$/.test(w))).toHaveLength(3);
    expect(writes.filter((w) => /^POST .*\/uploads\/[^/]+\/complete$/.test(w))).toHaveLength(1);
    expect(writes.filter((w) => w.endsWith('/objects/big.bin'))).toEqual([]);
    expect(writes.filter((w) => w.endsWith('/objects/small.bin'))).toEqual([
      `PUT /client/v4/accounts/${ledge.accountId}/r2/buckets/browser-bucket/objects/small.bin`,
    ]);
    const smallGot = await api('GET', '/r2/buckets/browser-bucket/objects/small.bin');
    expect(Buffer.from(await smallGot.arrayBuffer()).equals(small)).toBe(true);
    // A multipart object's etag names its part count, as R2's does.
    expect((await api('HEAD', '/r2/buckets/browser-bucket/objects/big.bin')).headers.get('etag')).toMatch(/-3"?$/);
    const seen = (await page.evaluate('window.progressSeen')) as number[];
    expect(seen[0]).toBe(0);
    expect(seen.at(-1)).toBe(1);
    // The progress bar moved on its own before the end (XHR upload progress events), not only at 0 and 100%.
    expect(seen.length).toBeGreaterThan(2);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThanOrEqual(seen[i - 1]!);
    expect((await api('HEAD', '/r2/buckets/browser-bucket/objects/big.bin')).headers.get('content-length')).toBe(
      String(bytes.length),
    );

    // The listing refreshes once the upload ends.
    const row = page.getByRole('row').filter({ hasText: 'big.bin' });
    await row.waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      row.getByRole('link', { name: 'Download big.bin' }).click(),
    ]);
    const downloaded = await readFile((await download.path())!);
    expect(downloaded.equals(bytes)).toBe(true);

    await row.getByRole('button', { name: 'Details of big.bin' }).click();
    await expect(page.locator('dl').getByText(`${bytes.length} bytes`, { exact: false }).count()).resolves.toBe(1);

    await screenshot(page, 'r2-objects');
    await row.getByRole('button', { name: 'Delete big.bin' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Delete "big.bin"? This cannot be undone.').waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await api('HEAD', '/r2/buckets/browser-bucket/objects/big.bin')).status).toBe(200);
    await row.getByRole('button', { name: 'Delete big.bin' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete object' }).click();
    await page.getByRole('row').filter({ hasText: 'big.bin' }).waitFor({ state: 'detached' });
    expect((await api('HEAD', '/r2/buckets/browser-bucket/objects/big.bin')).status).toBe(404);
    expect(errors).toEqual([]);
  });

  it("edits a bucket's CORS rules and public access from its settings", async () => {
    expect((await api('POST', '/r2/buckets', JSON.stringify({ name: 'settings-bucket' }))).status).toBe(200);
    const { page, errors } = await signedInPage();
    await page.goto(`${origin(ledge)}/#/r2/settings-bucket/settings`);
    // CORS is a form, one fieldset a rule (no JSON to write).
    const cors = page.getByRole('form', { name: 'CORS policy' });
    await cors.getByRole('button', { name: 'Add a rule' }).click();
    await cors.getByLabel('Allowed origins').fill('https://app.example');
    await expect(cors.getByRole('checkbox', { name: 'GET' }).isChecked()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Save CORS policy' }).click();
    await page.getByText('Saved.').waitFor();
    const saved = (await (await api('GET', '/r2/buckets/settings-bucket/cors')).json()) as {
      result: { rules: { allowed: { origins: string[] } }[] };
    };
    expect(saved.result.rules[0]?.allowed.origins).toEqual(['https://app.example']);
    await page.getByRole('button', { name: 'Allow access via r2.dev' }).click();
    await page.getByRole('button', { name: 'Disallow access via r2.dev' }).waitFor();
    const managed = (await (await api('GET', '/r2/buckets/settings-bucket/domains/managed')).json()) as {
      result: { enabled: boolean };
    };
    expect(managed.result.enabled).toBe(true);
    // The public URL as a browser reaches it: scheme, host and the traffic port.
    const publicPort = ledge.server.platform.traffic.port;
    await page.getByRole('link', { name: new RegExp(`^http://pub-[^/]+:${publicPort}/$`) }).waitFor();
    await screenshot(page, 'bucket-settings');
    expect(errors).toEqual([]);
  });

  it('shows an object named like markup as text, and runs nothing', async () => {
    const name = '<img src=x onerror=alert(1)>';
    expect((await api('POST', '/r2/buckets', JSON.stringify({ name: 'xss-bucket' }))).status).toBe(200);
    const put = await api('PUT', `/r2/buckets/xss-bucket/objects/${encodeURIComponent(name)}`, 'hi', {
      'x-amz-meta-note': '<script>alert(2)</script>',
    });
    expect(put.status).toBe(200);
    const { page, errors, dialogs } = await signedInPage();
    await page.goto(`${origin(ledge)}/#/r2/xss-bucket`);
    const cell = page.getByRole('cell', { name, exact: true });
    await cell.waitFor();
    await page.getByRole('button', { name: `Details of ${name}` }).click();
    await page.locator('dd', { hasText: '<script>alert(2)</script>' }).waitFor();
    await page.waitForTimeout(300);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.locator('main script').count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("a read-only token's view: everything visible, every control that changes something disabled", async () => {
    expect((await api('POST', '/r2/buckets', JSON.stringify({ name: 'seen-by-viewer' }))).status).toBe(200);
    const { page, errors } = await signedInPage(await readOnlyToken(ledge));
    await page.getByText('(read-only)').waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'R2 Object Storage' }).click();
    await page.getByRole('link', { name: 'seen-by-viewer' }).waitFor();
    await expect(page.getByRole('button', { name: 'Create bucket' }).isDisabled()).resolves.toBe(true);
    for (const button of await page.getByRole('button', { name: 'Delete' }).all())
      expect(await button.isDisabled()).toBe(true);
    await page.getByRole('link', { name: 'seen-by-viewer' }).click();
    await expect(page.getByLabel('Upload files').isDisabled()).resolves.toBe(true);
    await screenshot(page, 'read-only');
    expect(errors).toEqual([]);
  });

  it('can be used with the keyboard alone, and axe finds no serious violations', async () => {
    const { page } = await signedInPage();
    // From the top of the page: Tab to "Traffic" (past every product's link), open it, Tab to "Load Balancing".
    await page.locator('body').focus();
    let found = false;
    for (let i = 0; i < 30 && !found; i++) {
      await page.keyboard.press('Tab');
      found = (await page.evaluate('document.activeElement?.textContent')) === 'Traffic';
    }
    expect(found).toBe(true);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Load Balancing');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Load Balancing' }).waitFor();
    // The new page's heading takes the focus, so the next Tab starts in the page.
    expect(await page.evaluate('document.activeElement?.tagName')).toBe('H1');
    let pools = false;
    for (let i = 0; i < 10 && !pools; i++) {
      await page.keyboard.press('Tab');
      pools = (await page.evaluate('document.activeElement?.textContent')) === 'Manage Pools';
    }
    expect(pools).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Manage Pools' }).waitFor();

    for (const hash of [
      '#/',
      '#/r2',
      '#/r2/xss-bucket',
      '#/lb/pools',
      '#/notifications',
      '#/notifications/new?alert_type=load_balancing_health_alert',
      '#/notifications/migration',
      '#/notifications/destinations',
      '#/workers',
      '#/d1',
      '#/kv',
      '#/queues',
      '#/workflows',
      '#/durable-objects',
      '#/zones',
      '#/members',
      '#/tokens',
    ]) {
      await page.goto(`${origin(ledge)}/${hash}`);
      await page.locator('main h1').first().waitFor();
      await page.waitForLoadState('networkidle');
      const violations = await seriousViolations(page);
      expect({ hash, violations }).toEqual({ hash, violations: [] });
    }
    await page.goto(`${origin(ledge)}/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in');
  });
});
