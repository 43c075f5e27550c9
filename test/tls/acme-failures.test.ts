import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../src/shared/clock.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import { createLoadBalancer, createPool, createZone, NamedOrigin } from '../load-balancing/traffic-helpers.ts';

/**
 * An ACME directory that answers 404: the order fails, the failure shows in the API
 * (certificate_packs' validation_errors) and the logs, and it is retried with a growing delay.
 */
let ledge: TestLedge;
let origin: NamedOrigin;
let directory: Server;
let directoryHits = 0;
const logs: string[] = [];

beforeAll(async () => {
  directory = createServer((_req, res) => {
    directoryHits++;
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"type":"urn:ietf:params:acme:error:malformed","detail":"no such directory"}');
  });
  await new Promise<void>((resolve) => directory.listen(0, '127.0.0.1', resolve));
  const port = (directory.address() as { port: number }).port;
  ledge = await startLedge({
    env: {
      LEDGE_ACME_DIRECTORY_URL: `http://127.0.0.1:${port}/dir`,
      LEDGE_ACME_INTERVAL_MS: '200',
      LEDGE_ACME_RETRY_MS: '300',
    },
    logger: createLogger('info', systemClock, {}, (line) => void logs.push(line)),
  });
  origin = await NamedOrigin.start('o');
});

afterAll(async () => {
  await ledge?.close();
  await origin?.stop();
  directory?.close();
});

it('shows a failed order in the API and the logs, and retries it with backoff', { timeout: 90_000 }, async () => {
  const zoneId = await createZone(ledge, 'down.test');
  const pool = await createPool(ledge, 'p', [origin]);
  await createLoadBalancer(ledge, zoneId, { name: 'app.down.test', default_pools: [pool], fallback_pool: pool });
  const packs = async () => {
    const res = await fetch(`${ledge.apiUrl}/zones/${zoneId}/ssl/certificate_packs`, {
      headers: ledge.tokenHeaders,
    });
    return ((await res.json()) as { result: Record<string, unknown>[] }).result;
  };
  const failed = await waitFor(
    async () => {
      const [pack] = await packs();
      return pack && (pack['failures'] as number) >= 1 ? pack : undefined;
    },
    'a failed attempt',
    { timeoutMs: 60_000 },
  );
  expect(failed).toMatchObject({ hosts: ['app.down.test'], status: 'pending_validation', order_status: 'failed' });
  expect((failed['validation_errors'] as { message: string }[])[0]!.message).not.toBe('');
  expect(logs.some((line) => line.includes('ACME order failed') && line.includes('app.down.test'))).toBe(true);
  // Retried after LEDGE_ACME_RETRY_MS (then doubling), not at the next pass of 200 ms.
  const retryIn = Date.parse(failed['next_attempt_on'] as string) - Date.parse(failed['modified_on'] as string);
  expect(retryIn).toBeGreaterThanOrEqual(300);
  expect(directoryHits).toBeGreaterThan(0);
});
