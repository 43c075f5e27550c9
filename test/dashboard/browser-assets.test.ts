import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { accountSubdomain, api } from '../workers/helpers.ts';
import { browserFixture } from './helpers.ts';

let ledge: TestLedge;
const fixture = browserFixture(async () => (ledge = await startLedge()));

it("the worker page shows the current version's assets and the worker's URL as a link", async () => {
  const dir = tempDir('dashboard-assets-');
  mkdirSync(join(dir, 'public'));
  writeFileSync(
    join(dir, 'wrangler.toml'),
    'name = "shop"\ncompatibility_date = "2025-06-01"\n\n[assets]\ndirectory = "./public"\nnot_found_handling = "single-page-application"\n',
  );
  writeFileSync(join(dir, 'public/index.html'), '<h1>shop</h1>');
  writeFileSync(join(dir, 'public/app.js'), 'x'.repeat(2048));
  writeFileSync(join(dir, 'public/_redirects'), '/old / 301\n');
  const deployed = await runCli(['deploy'], { env: cliEnv(ledge), cwd: dir });
  expect(deployed.code, deployed.stderr).toBe(0);

  const { page, errors } = await fixture.signedInPage();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workers & Pages' }).click();
  await page.getByRole('link', { name: 'shop' }).click();
  await page.getByRole('heading', { name: 'Worker shop' }).waitFor();
  const assets = page.getByRole('table', { name: 'Static assets of the current version' });
  await assets.waitFor();
  const row = (await assets.locator('tbody tr').first().innerText()).split('\t');
  expect(row[0]).toBe('2');
  expect(row[1]).toMatch(/^2(\.0)? KiB$/);
  expect(row[3]).toContain('not_found_handling: single-page-application');
  expect(row[3]).toContain('_redirects');
  // The URL the API gives for the script's route, as a link that opens the site.
  const route = await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/scripts/shop/subdomain`);
  const url = route.body.result.url as string;
  expect(url).toContain(`shop.${await accountSubdomain(ledge)}.localhost`);
  const link = page.getByRole('link', { name: url });
  expect(await link.getAttribute('href')).toBe(url);
  expect(errors).toEqual([]);
});
