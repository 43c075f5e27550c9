import { beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import {
  accountSubdomain,
  api,
  callFunction,
  enableWorkersDev,
  functionsPort,
  uploadScript,
} from '../workers/helpers.ts';
import { browserFixture, origin } from './helpers.ts';
import { screenshot } from './shots.ts';

const WORKER = `export default {
  async fetch(request) {
    const path = new URL(request.url).pathname;
    console.log('served', request.method, path);
    return new Response('ok', { status: path === '/missing' ? 404 : 200 });
  },
  async scheduled() {},
};`;

let ledge: TestLedge;
let host: string;
const fixture = browserFixture(async () => (ledge = await startLedge()));

beforeAll(async () => {
  expect((await uploadScript(ledge, 'logger', { modules: { 'index.js': WORKER } })).status).toBe(200);
  await enableWorkersDev(ledge, 'logger');
  host = `logger.${await accountSubdomain(ledge)}.localhost`;
  const scripts = `/accounts/${ledge.accountId}/workers/scripts/logger`;
  expect(
    (await api(ledge, 'PUT', `${scripts}/secrets`, { name: 'API_KEY', text: 'hunter2-secret', type: 'secret_text' }))
      .status,
  ).toBe(200);
  expect((await api(ledge, 'PUT', `${scripts}/schedules`, [{ cron: '*/30 * * * *' }])).status).toBe(200);
});

const call = (method: string, path: string) => callFunction(functionsPort(ledge), host, path, { method });

describe('dashboard in Chromium: Workers & Pages', () => {
  it('shows a script with its secret names (never values) and crons, and streams its log live with filters', async () => {
    const { page, errors } = await fixture.page();
    await page.goto(`${origin(ledge)}/`);
    await page.getByLabel('API token').fill(ledge.apiToken);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workers & Pages' }).click();
    await page.getByRole('link', { name: 'logger' }).click();
    await page.getByRole('heading', { name: 'Worker logger' }).waitFor();
    await page
      .getByRole('table', { name: /Secret names/ })
      .getByText('API_KEY')
      .waitFor();
    expect(await page.content()).not.toContain('hunter2-secret');
    await page.getByRole('table', { name: 'Schedules' }).getByText('*/30 * * * *').waitFor();

    await page.getByRole('button', { name: 'Start live log' }).click();
    await page.getByText('Live: new requests appear at the top.').waitFor();
    const log = page.getByRole('list', { name: 'Live log' });
    expect((await call('GET', '/first')).status).toBe(200);
    await log.getByText(/GET http:\/\/[^ ]+\/first → 200/).waitFor();
    await log.getByText('[log] served GET /first').waitFor();

    // Only POSTs from now on, then also no 4xx.
    await page.getByLabel('Method').selectOption('POST');
    await call('GET', '/hidden-get');
    await call('POST', '/shown-post');
    await log.getByText(/POST http:\/\/[^ ]+\/shown-post → 200/).waitFor();
    await page.getByLabel('Method').selectOption('');
    await page.getByRole('checkbox', { name: '4xx' }).uncheck();
    await call('GET', '/missing');
    await call('GET', '/after-missing');
    await log.getByText(/\/after-missing → 200/).waitFor();
    expect(await log.getByText('/hidden-get').count()).toBe(0);
    expect(await log.getByText('/missing →').count()).toBe(0);
    // Text filter.
    await page.getByRole('checkbox', { name: '4xx' }).check();
    await page.getByLabel('Text contains').fill('needle');
    await call('GET', '/hay');
    await call('GET', '/needle');
    await log.getByText(/\/needle → 200/).waitFor();
    expect(await log.getByText('/hay').count()).toBe(0);

    // The request chart: the calls above (2xx and a 404), by status class, drawn with uPlot.
    await page.getByRole('button', { name: 'Last day' }).click();
    await page.getByRole('button', { name: 'Last hour' }).click();
    const totals = page.getByRole('status', { name: 'Request totals' });
    await totals.getByText(/^\d+ requests in the period/).waitFor();
    const text = (await totals.textContent()) ?? '';
    const [, requests, ok, , notFound] =
      /^(\d+) requests in the period \(2xx (\d+), 3xx (\d+), 4xx (\d+)/.exec(text) ?? [];
    // The calls so far: /first, /hidden-get, /shown-post, /after-missing, /hay, /needle answered 200, /missing 404
    // (the chart reads up to its own request, not up to the last periodic sample).
    expect([Number(requests), Number(ok), Number(notFound)]).toEqual([7, 6, 1]);
    await page.getByRole('img', { name: 'Requests of logger by status class' }).locator('canvas').waitFor();
    expect(await page.locator('.u-legend').getByText('4xx').count()).toBeGreaterThan(0);
    await screenshot(page, 'worker');

    await page.getByRole('button', { name: 'Load history' }).click();
    await page.getByRole('list', { name: 'Log history' }).getByText('served GET /first').first().waitFor();
    await page.getByRole('button', { name: 'Stop live log' }).click();
    await page.getByText('Not connected.').waitFor();
    expect(errors).toEqual([]);
  });
});
