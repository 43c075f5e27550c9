import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { seriousViolations } from '../helpers/browser.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { browserFixture } from './helpers.ts';

let ledge: TestLedge;
const { signedInPage } = browserFixture(async () => (ledge = await startLedge({ flags: { functionsProcesses: 1 } })));

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/storage/kv/namespaces${path}`, {
    ...init,
    headers: { ...ledge.tokenHeaders, ...(init.headers as Record<string, string> | undefined) },
  });

describe('dashboard in Chromium: Workers KV', () => {
  it('creates and renames a namespace, adds, searches, pages, edits and deletes keys, and deletes it', async () => {
    const { page, errors } = await signedInPage();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workers KV' }).click();
    await page.getByLabel('Namespace name').fill('browser-kv');
    await page.getByRole('button', { name: 'Create namespace' }).click();
    await page.getByRole('link', { name: 'browser-kv' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Rename browser-kv' }).click();
    await page.getByLabel('New name').fill('todo-store');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('link', { name: 'todo-store' }).click();
    await page.getByRole('heading', { name: 'Workers KV: todo-store' }).waitFor();
    const id = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!.split('?')[0]!);

    // 60 keys through the API (wrangler kv bulk put sends the same), so the list has a second page.
    const pairs = Array.from({ length: 60 }, (_, i) => ({ key: `item:${String(i).padStart(2, '0')}`, value: `v${i}` }));
    const bulk = await api(`/${id}/bulk`, { method: 'PUT', body: JSON.stringify(pairs) });
    expect(bulk.status).toBe(200);

    await page.getByLabel('Key', { exact: true }).fill('note:<b>1</b>');
    await page.getByLabel('Value', { exact: true }).fill('<img src=x onerror=alert(1)>');
    await page.getByRole('button', { name: 'Add entry' }).click();
    await expect.poll(async () => (await api(`/${id}/keys?prefix=note:`)).json()).toMatchObject({ result: [{}] });

    // 50 a page: the first page ends at item:49, the next page holds the rest, the new key (as text) last.
    await page.reload();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(50);
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.getByRole('link', { name: 'note:<b>1</b>' }).waitFor();
    expect(await page.locator('table b, table img').count()).toBe(0);
    expect(await page.locator('tbody tr').count()).toBe(11);
    await page.getByRole('link', { name: 'First page' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(50);
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByLabel('Search by key prefix').fill('note:');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => page.locator('tbody td:first-child').allTextContents()).toEqual(['note:<b>1</b>']);

    // The value, shown as text, edited with metadata and an expiration.
    await page.getByRole('link', { name: 'note:<b>1</b>' }).click();
    await page.getByRole('heading', { name: 'Key note:<b>1</b>' }).waitFor();
    expect(await page.getByLabel('Value', { exact: true }).inputValue()).toBe('<img src=x onerror=alert(1)>');
    expect(await page.locator('img').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel('Value', { exact: true }).fill('buy milk');
    await page.getByLabel('Metadata').fill('{"done": false}');
    await page.getByLabel('Expiration', { exact: true }).fill('4102444800');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    const value = await api(`/${id}/values/${encodeURIComponent('note:<b>1</b>')}`);
    expect(await value.text()).toBe('buy milk');
    const listed = (await (await api(`/${id}/keys?prefix=note:`)).json()) as { result: unknown[] };
    expect(listed.result).toEqual([{ name: 'note:<b>1</b>', expiration: 4102444800, metadata: { done: false } }]);

    // The API's refusal (metadata over 1,024 bytes) is shown as it answers, and nothing is written.
    await page.getByLabel('Value', { exact: true }).fill('not saved');
    await page.getByLabel('Metadata').fill(JSON.stringify({ pad: 'x'.repeat(1100) }));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').waitFor();
    expect(await (await api(`/${id}/values/${encodeURIComponent('note:<b>1</b>')}`)).text()).toBe('buy milk');

    await page.reload();
    expect(JSON.parse(await page.getByLabel('Metadata').inputValue())).toEqual({ done: false });
    expect(await page.getByLabel('Expiration', { exact: true }).inputValue()).toBe('4102444800');
    await page.getByRole('button', { name: 'Delete key' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete key' }).click();
    await page.getByRole('heading', { name: 'Workers KV: todo-store' }).waitFor();
    expect((await api(`/${id}/values/${encodeURIComponent('note:<b>1</b>')}`)).status).toBe(404);

    await page.getByRole('link', { name: 'All namespaces' }).click();
    await page.getByRole('button', { name: 'Delete todo-store' }).click();
    await page.getByRole('button', { name: 'Delete namespace' }).click();
    await page.getByText('No namespaces yet').waitFor();
    expect(((await (await api('')).json()) as { result: unknown[] }).result).toEqual([]);
    expect(errors).toEqual([]);
  });
  it('offers a value too large to show as a download through the API instead of a text box', async () => {
    const { page, errors } = await signedInPage();
    const created = await api('', { method: 'POST', body: JSON.stringify({ title: 'large-values' }) });
    const { id } = ((await created.json()) as { result: { id: string } }).result;
    const size = 1.5 * 1024 * 1024;
    const put = await api(`/${id}/values/dumps%2Fbig.json`, { method: 'PUT', body: 'x'.repeat(size) });
    expect(put.status).toBe(200);

    await page.goto(`${page.url().split('#')[0]}#/kv/${id}/key/${encodeURIComponent('dumps/big.json')}`);
    await page.getByRole('heading', { name: 'Key dumps/big.json' }).waitFor();
    await page.getByText('This value is too large to show here: 1,572,864 bytes (1.5 MiB).').waitFor();
    expect(await page.locator('textarea#kv-value').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Save' }).isDisabled()).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download it' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('big.json');
    expect(statSync(await download.path()).size).toBe(size);
    expect(errors).toEqual([]);
  });
});
