import { describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { createPool } from '../notifications/api-helpers.ts';
import { browserFixture, origin } from './helpers.ts';

let ledge: TestLedge;
const { signedInPage } = browserFixture(async () => (ledge = await startLedge()));

/** How far the page reaches past the viewport sideways (0: nothing to scroll to). */
const overflow = `(() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - window.innerWidth)()`;

describe('dashboard in Chromium on a 390-pixel-wide phone', () => {
  it('folds the navigation into a menu and never scrolls the page sideways, wide tables scrolling in their box', async () => {
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}${path}`, {
        method,
        headers: { authorization: `Bearer ${ledge.apiToken}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    expect((await api('POST', '/r2/buckets', { name: 'a-rather-long-bucket-name-for-a-narrow-screen' })).status).toBe(
      200,
    );
    const poolId = await createPool(ledge, {
      name: 'pool-with-a-long-name-that-does-not-fit-on-a-phone',
      origins: [{ name: 'origin-with-a-long-name', address: 'origin-with-a-long-name.example.com', port: 8443 }],
    });
    const { page, errors } = await signedInPage();
    await page.setViewportSize({ width: 390, height: 844 });

    const nav = page.getByRole('navigation', { name: 'Main' });
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.waitFor();
    expect(await nav.isVisible()).toBe(false);
    await menu.click();
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('true');
    await nav.getByRole('link', { name: 'API Tokens' }).click();
    await page.getByRole('heading', { name: 'API Tokens' }).waitFor();
    // Choosing a page folds the menu again.
    expect(await nav.isVisible()).toBe(false);

    for (const [hash, heading] of [
      ['#/', 'Overview'],
      ['#/tokens', 'API Tokens'],
      ['#/members', 'Members'],
      ['#/r2', 'R2 Object Storage'],
      ['#/r2/a-rather-long-bucket-name-for-a-narrow-screen/settings', /^Settings of /],
      ['#/lb/pools', 'Manage Pools'],
      [`#/lb/pools/${poolId}`, /^Edit pool /],
      ['#/lb/monitors', 'Manage Monitors'],
      ['#/notifications', 'Notifications'],
      ['#/notifications/new?alert_type=load_balancing_health_alert', 'Create a Health Alert'],
      ['#/notifications/history', 'Notifications'],
      ['#/workers', 'Workers & Pages'],
      ['#/kv', 'Workers KV'],
      ['#/zones', 'Zones'],
    ] as const) {
      await page.goto(`${origin(ledge)}/${hash}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      expect({ hash, overflow: await page.evaluate(overflow) }).toEqual({ hash, overflow: 0 });
    }
    // The tokens table is wider than the phone: it scrolls inside its own box.
    await page.goto(`${origin(ledge)}/#/tokens`);
    const box = page.locator('.table-scroll').first();
    await box.waitFor();
    const widths = await box.evaluate((element) => ({ box: element.clientWidth, table: element.scrollWidth }));
    expect(widths.table).toBeGreaterThan(widths.box);
    expect(errors).toEqual([]);
  });
});
