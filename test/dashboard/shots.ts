import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { REPO_ROOT } from '../helpers/ledge.ts';

/**
 * With LEDGE_DASHBOARD_SCREENSHOTS=1 the browser tests save the main pages to docs/images/ (how the README's
 * pictures are made); otherwise nothing is written.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env['LEDGE_DASHBOARD_SCREENSHOTS'] !== '1') return;
  const dir = join(REPO_ROOT, 'docs/images');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `dashboard-${name}.png`) });
}
