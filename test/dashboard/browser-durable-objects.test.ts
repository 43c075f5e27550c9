import { describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { callFunction } from '../workers/helpers.ts';
import { FIRST_MIGRATION, routeObjects, uploadObjects } from '../workers/durable-objects/fixture.ts';
import { browserFixture } from './helpers.ts';

let ledge: TestLedge;
const { signedInPage } = browserFixture(async () => (ledge = await startLedge({ flags: { functionsProcesses: 1 } })));

describe('dashboard in Chromium: Durable Objects', () => {
  it("lists a Worker's classes and the objects that have stored data", async () => {
    const uploaded = await uploadObjects(ledge, 'objects', { migrations: FIRST_MIGRATION });
    expect(uploaded.status, JSON.stringify(uploaded.body.errors)).toBe(200);
    const target = await routeObjects(ledge, 'objects');
    for (const name of ['alpha', 'beta']) await callFunction(target.port, target.host, `/counter/${name}`);
    const ids = await Promise.all(
      ['alpha', 'beta'].map(
        async (name) =>
          (JSON.parse((await callFunction(target.port, target.host, `/ids/${name}`)).text) as { named: string }).named,
      ),
    );

    const { page, errors } = await signedInPage();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Durable Objects' }).click();
    await page.getByRole('heading', { name: 'Durable Objects' }).waitFor();
    await expect
      .poll(() => page.locator('tbody tr').allTextContents())
      .toEqual([expect.stringContaining('Counter'), expect.stringContaining('Room')]);
    await page.getByRole('link', { name: 'Counter' }).click();
    await page.getByRole('heading', { name: 'Durable Objects: Counter' }).waitFor();
    await expect.poll(() => page.locator('tbody td').allTextContents()).toEqual([...ids].sort());
    await page.getByRole('link', { name: 'All namespaces' }).click();
    await page.getByRole('link', { name: 'Room' }).click();
    await page.getByText('No object of this class has stored data yet.').waitFor();
    expect(errors).toEqual([]);
  });
});
