import { describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { accountSubdomain, callFunction, enableWorkersDev, functionsPort, uploadScript } from '../workers/helpers.ts';
import { browserFixture } from './helpers.ts';

let ledge: TestLedge;
const { signedInPage } = browserFixture(async () => (ledge = await startLedge({ flags: { functionsProcesses: 1 } })));

describe('dashboard in Chromium: Queues', () => {
  it('creates a queue, shows its backlog and producer, and deletes another', async () => {
    const { page, errors } = await signedInPage();
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Queues' }).click();
    for (const name of ['orders', 'scratch']) {
      await page.getByLabel('Queue name').fill(name);
      await page.getByRole('button', { name: 'Create queue' }).click();
      await page.getByRole('cell', { name, exact: true }).waitFor();
    }

    // A producer sends three messages to "orders"; with no consumer they wait in it.
    const upload = await uploadScript(ledge, 'shop', {
      modules: {
        'index.js':
          'export default { async fetch(r, env) { await env.ORDERS.send({ n: 1 }); return new Response("sent"); } };',
      },
      metadata: { bindings: [{ type: 'queue', name: 'ORDERS', queue_name: 'orders' }] },
    });
    expect(upload.status, JSON.stringify(upload.body)).toBe(200);
    await enableWorkersDev(ledge, 'shop');
    const host = `shop.${await accountSubdomain(ledge)}.localhost`;
    for (let i = 0; i < 3; i++) expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe('sent');

    await nav.getByRole('link', { name: 'Overview' }).click();
    await nav.getByRole('link', { name: 'Queues' }).click();
    const orders = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'orders', exact: true }) });
    await expect
      .poll(() => orders.locator('td').allTextContents())
      .toEqual([
        'orders',
        expect.stringMatching(/^[0-9a-f]{32}$/),
        expect.stringMatching(/^3 \(/),
        'none',
        'shop',
        expect.any(String),
        expect.any(String),
      ]);

    const scratch = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'scratch', exact: true }) });
    await scratch.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Delete queue' }).click();
    await expect.poll(() => page.getByRole('cell', { name: 'scratch', exact: true }).count()).toBe(0);
    expect(errors).toEqual([]);
  });
});
