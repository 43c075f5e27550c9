import { describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { browserFixture } from './helpers.ts';

let ledge: TestLedge;
const { signedInPage } = browserFixture(async () => (ledge = await startLedge({ flags: { functionsProcesses: 1 } })));

describe('dashboard in Chromium: D1 SQL Database', () => {
  it('creates a database, runs SQL in its console, shows the rows as text, and deletes it', async () => {
    const { page, errors } = await signedInPage();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'D1 SQL Database' }).click();
    await page.getByLabel('Database name').fill('browser-db');
    await page.getByRole('button', { name: 'Create database' }).click();
    await page.getByRole('link', { name: 'browser-db' }).click();
    await page.getByRole('heading', { name: 'D1 SQL Database: browser-db' }).waitFor();

    await page
      .getByLabel('SQL')
      .fill(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('<b>bold?</b>'); SELECT * FROM notes",
      );
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByText('3 statements run.').waitFor();
    await expect.poll(() => page.locator('.query-results td').allTextContents()).toEqual(['1', '<b>bold?</b>']);
    expect(await page.locator('.query-results b').count()).toBe(0);

    // SQLite's refusal, shown as the API answers it.
    await page.getByLabel('SQL').fill('SELECT * FROM nowhere');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByText('no such table: nowhere: SQLITE_ERROR').waitFor();

    await page.getByRole('link', { name: 'All databases' }).click();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Delete database' }).click();
    await page.getByText('No databases yet').waitFor();
    const listed = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/d1/database`, {
      headers: ledge.tokenHeaders,
    });
    expect(((await listed.json()) as { result: unknown[] }).result).toEqual([]);
    expect(errors).toEqual([]);
  });
});
