import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/**
 * Debian's Chromium (`chromium` in .ci/apt-packages), driven by playwright-core: no browser is downloaded.
 * LEDGE_CHROMIUM names another binary.
 */
export const CHROMIUM = process.env['LEDGE_CHROMIUM'] ?? '/usr/bin/chromium';

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM);
}

export async function launchBrowser(): Promise<Browser> {
  if (!chromiumAvailable())
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (see .ci/apt-packages)`);
  // --no-sandbox: CI and these machines run tests as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export interface PageWatch {
  page: Page;
  context: BrowserContext;
  /** Uncaught page errors and dialogs (alert/confirm) the page opened: an XSS would show here. */
  errors: string[];
  dialogs: string[];
  /** CSP violations the browser reported. */
  console: string[];
}

export async function openPage(browser: Browser): Promise<PageWatch> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
  const page = await context.newPage();
  const watch: PageWatch = { page, context, errors: [], dialogs: [], console: [] };
  page.on('pageerror', (error) => watch.errors.push(error.message));
  page.on('dialog', (dialog) => {
    watch.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('console', (message) => {
    if (message.type() === 'error') watch.console.push(message.text());
  });
  return watch;
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, which the page's CSP does not govern)
 * and returns the serious and critical violations.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(`${AXE_SOURCE};undefined`);
  const violations = (await page.evaluate(
    'axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))',
  )) as AxeViolation[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
