import { createServer, type Server } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import { createLoadBalancer, createPool, createZone, NamedOrigin } from '../load-balancing/traffic-helpers.ts';
import { browserFixture } from './helpers.ts';

/** An ACME directory that answers 404: every order of the zone's hostname fails and is retried. */
let ledge: TestLedge;
let directory: Server;
let origin: NamedOrigin;
const { signedInPage } = browserFixture(async () => {
  directory = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"type":"urn:ietf:params:acme:error:malformed","detail":"no such directory"}');
  });
  await new Promise<void>((resolve) => directory.listen(0, '127.0.0.1', resolve));
  const port = (directory.address() as { port: number }).port;
  origin = await NamedOrigin.start('o');
  ledge = await startLedge({
    env: {
      LEDGE_ACME_DIRECTORY_URL: `http://127.0.0.1:${port}/dir`,
      LEDGE_ACME_INTERVAL_MS: '200',
      // Long enough that the page shows the same attempt the API showed.
      LEDGE_ACME_RETRY_MS: '600000',
    },
  });
  return ledge;
});
afterAll(async () => {
  await origin?.stop();
  directory?.close();
});

describe('dashboard in Chromium: a zone SSL/TLS page', () => {
  it('shows a failing ACME order, its error and when it is tried again', async () => {
    const zoneId = await createZone(ledge, 'down.test');
    const pool = await createPool(ledge, 'p', [origin]);
    await createLoadBalancer(ledge, zoneId, { name: 'app.down.test', default_pools: [pool], fallback_pool: pool });
    const failed = await waitFor(
      async () => {
        const res = await fetch(`${ledge.apiUrl}/zones/${zoneId}/ssl/certificate_packs`, {
          headers: ledge.tokenHeaders,
        });
        const [pack] = ((await res.json()) as { result: Record<string, unknown>[] }).result;
        return pack?.['order_status'] === 'failed' ? pack : undefined;
      },
      'a failed order',
      { timeoutMs: 60_000 },
    );
    const { page, errors } = await signedInPage();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Zones' }).click();
    await page.getByRole('link', { name: 'down.test' }).click();
    await page.getByRole('heading', { name: 'SSL/TLS: down.test' }).waitFor();
    await page.getByRole('alert').filter({ hasText: 'certificate order failing' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'app.down.test' });
    const cells = await row.getByRole('cell').allTextContents();
    const message = (failed['validation_errors'] as { message: string }[])[0]!.message;
    expect(cells.slice(0, 2)).toEqual(['app.down.test', 'failing']);
    expect(cells[4]).toBe(message);
    expect(Number(cells[5])).toBeGreaterThanOrEqual(1);
    // The next attempt, as the browser writes the API's time.
    const shown = await page.evaluate((iso) => new Date(iso).toLocaleString(), failed['next_attempt_on'] as string);
    expect(cells[6]).toBe(shown);
    expect(errors).toEqual([]);
  });
});
