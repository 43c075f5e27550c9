import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/index.ts';
import { dataPaths, rememberedDatabaseUrl } from '../../src/server/index.ts';
import { spawnLedge, tempDir, TEST_CREDENTIALS, type SpawnedLedge } from '../helpers/ledge.ts';
import { TestOrigin } from '../load-balancing/helpers.ts';
import { alerting, call, type LedgeTarget } from './api-helpers.ts';
import { startWebhookReceiver, type WebhookReceiver } from './receivers.ts';
import { poll, waitFor } from '../helpers/wait.ts';

/** The API helpers' view of a spawned server. */
function asLedge(spawned: SpawnedLedge): LedgeTarget {
  return {
    apiUrl: spawned.apiUrl,
    accountId: TEST_CREDENTIALS.accountId,
    tokenHeaders: { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` },
  };
}

describe('at-least-once delivery across a kill -9', () => {
  const dataDir = tempDir();
  const env = { LEDGE_LB_MIN_INTERVAL: '1', LEDGE_NOTIFY_RETRY_BASE_MS: '200', LEDGE_NOTIFY_RETRY_MAX_MS: '1000' };
  let hooks: WebhookReceiver;
  let origin: TestOrigin;
  let server: SpawnedLedge | undefined;

  beforeAll(async () => {
    hooks = await startWebhookReceiver();
    origin = await TestOrigin.start();
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await hooks.close();
    await origin.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sends after restart the deliveries that were pending or in flight when the server was killed', async () => {
    server = await spawnLedge(dataDir, [], env);
    const ledge = asLedge(server);
    const hook = await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, {
      name: 'r',
      url: hooks.url,
      secret: 'k',
    });
    const webhookId = (hook.body.result as { id: string }).id;
    await call(ledge, 'POST', `${alerting(ledge)}/policies`, {
      name: 'outages',
      enabled: true,
      alert_type: 'load_balancing_health_alert',
      mechanisms: { webhooks: [{ id: webhookId }] },
      filters: { event_source: ['origin'] },
    });
    const monitor = await call(ledge, 'POST', `/accounts/${ledge.accountId}/load_balancers/monitors`, {
      interval: 1,
      timeout: 1,
      retries: 0,
    });
    await call(ledge, 'POST', `/accounts/${ledge.accountId}/load_balancers/pools`, {
      name: 'p',
      monitor: (monitor.body.result as { id: string }).id,
      origins: [{ name: 'only', address: '127.0.0.1', port: origin.port }],
    });

    // The receiver hangs: the alert is claimed and in flight when the server dies.
    hooks.status = 0;
    // Two probes (real HTTP from the server process): the origin is recorded healthy before it stops.
    await waitFor(() => origin.requests.length >= 2, 'two probes', { timeoutMs: 10_000 });
    await origin.stop();
    const [hung] = await hooks.waitFor(1, (h) => h.body['policy_name'] === 'outages');
    expect(hung?.answered).toBe(0);
    expect(await server.stop('SIGKILL')).toBeNull();
    server = undefined;

    // Read directly: the server is gone, the data dir's database is all there is.
    const db = openDatabase(rememberedDatabaseUrl(dataDir), dataPaths(dataDir).database);
    const pending = (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM notification_outbox'))!.n;
    await db.close();
    expect(pending).toBe(1);

    hooks.status = 200;
    const countBefore = hooks.received.length;
    server = await spawnLedge(dataDir, [], env);
    const [resent] = await hooks.waitFor(1, (h) => h.body['policy_name'] === 'outages' && h.answered === 200);
    expect(hooks.received.indexOf(resent!)).toBeGreaterThanOrEqual(countBefore);
    expect(resent?.body['alert_correlation_id']).toBe(hung?.body['alert_correlation_id']);
    expect(resent?.headers['cf-webhook-auth']).toBe('k');

    const restarted = asLedge(server);
    const rows = await pollHistory(restarted);
    expect(rows.some((row) => row.status === 'delivered' && row.name === 'outages')).toBe(true);
  });
});

async function pollHistory(ledge: LedgeTarget): Promise<{ status: string; name: string }[]> {
  let rows: { status: string; name: string }[] = [];
  const delivered = await poll(
    async () => {
      const { body } = await call(ledge, 'GET', `${alerting(ledge)}/history?per_page=100`);
      rows = body.result as { status: string; name: string }[];
      return rows.some((row) => row.status === 'delivered' && row.name === 'outages');
    },
    { timeoutMs: 10_000, everyMs: 100 },
  );
  if (!delivered) throw new Error(`no delivered row in history: ${JSON.stringify(rows)}`);
  return rows;
}
