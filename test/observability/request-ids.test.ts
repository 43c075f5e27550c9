import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/shared/clock.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { alerting, createPool } from '../notifications/api-helpers.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../notifications/receivers.ts';
import { TestOrigin, waitFor } from '../load-balancing/helpers.ts';
import { accountSubdomain, callFunction, enableWorkersDev, functionsPort, uploadScript } from '../workers/helpers.ts';

// Monitors may probe every second here (the server default minimum is 5 s).
process.env['LEDGE_LB_MIN_INTERVAL'] = '1';

/** The server's log records, as JSON lines. */
const records: Record<string, unknown>[] = [];
let ledge: TestLedge;
let hooks: WebhookReceiver;

beforeAll(async () => {
  hooks = await startWebhookReceiver();
  const logger = createLogger(
    'info',
    systemClock,
    {},
    (line) => records.push(JSON.parse(line) as Record<string, unknown>),
    'json',
  );
  ledge = await startLedge({ logger });
});
afterAll(async () => {
  await ledge?.close();
  await hooks?.close();
});

/** An API call that answers its x-request-id with the v4 body. */
async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${ledge.apiUrl}${path}`, {
    method,
    headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const requestId = response.headers.get('x-request-id');
  expect(requestId).toBeTruthy();
  return {
    status: response.status,
    requestId: requestId!,
    body: (await response.json()) as { result: { id: string } },
  };
}

describe('request ids', () => {
  it('a webhook test message carries the x-request-id of the API call that sent it', async () => {
    const created = await call('POST', `${alerting(ledge)}/destinations/webhooks`, { name: 'r', url: hooks.url });
    expect(created.status).toBe(200);
    const [test] = await hooks.waitFor(1);
    expect(test!.headers['x-request-id']).toBe(created.requestId);
  });

  it('an outbox delivery written by an API call carries its id to the webhook and the delivery log line', async () => {
    const hookId = (await call('GET', `${alerting(ledge)}/destinations/webhooks`)).body.result as unknown as {
      id: string;
    }[];
    const policy = await call('POST', `${alerting(ledge)}/policies`, {
      name: 'switches',
      enabled: true,
      alert_type: 'load_balancing_pool_enablement_alert',
      mechanisms: { webhooks: [{ id: hookId[0]!.id }] },
    });
    expect(policy.status).toBe(200);
    const pool = await createPool(ledge, { name: 'joined' });
    const patched = await call('PATCH', `/accounts/${ledge.accountId}/load_balancers/pools/${pool}`, {
      enabled: false,
    });
    expect(patched.status).toBe(200);
    const [delivered] = await hooks.waitFor(
      1,
      (h) => (h.body['data'] as { pool_name?: string })?.pool_name === 'joined',
    );
    expect(delivered!.headers['x-request-id']).toBe(patched.requestId);
    const line = await waitFor(() =>
      records.find((r) => r['msg'] === 'notification delivery' && r['request_id'] === patched.requestId),
    );
    expect(line).toMatchObject({ status: 'delivered' });
    // The API's own line for that call has the same id.
    expect(records.some((r) => r['msg'] === 'request' && r['request_id'] === patched.requestId)).toBe(true);
  });

  it('a health check armed while serving an API call does not pass the id of that call on to what it sets off later', async () => {
    const origin = await TestOrigin.start();
    try {
      const hookId = (
        (await call('GET', `${alerting(ledge)}/destinations/webhooks`)).body.result as unknown as {
          id: string;
        }[]
      )[0]!.id;
      const policy = await call('POST', `${alerting(ledge)}/policies`, {
        name: 'health',
        enabled: true,
        alert_type: 'load_balancing_health_alert',
        mechanisms: { webhooks: [{ id: hookId }] },
      });
      expect(policy.status).toBe(200);
      const lb = `/accounts/${ledge.accountId}/load_balancers`;
      const monitor = await call('POST', `${lb}/monitors`, { interval: 1, timeout: 1, retries: 0 });
      // Creating the pool re-plans the health checker inside this API call.
      const pool = await call('POST', `${lb}/pools`, {
        name: 'watched',
        monitor: monitor.body.result.id,
        origins: [{ name: 'w1', address: '127.0.0.1', port: origin.port }],
      });
      expect(pool.status).toBe(200);
      // Two probes from the checker's own timer: the origin is recorded healthy before it starts failing.
      await waitFor(() => (origin.requests.length >= 2 ? true : undefined), 10_000, 'two probes');
      origin.mode = { kind: 'status', status: 503 };
      const [alert] = await hooks.waitFor(
        1,
        (h) => (h.body['data'] as { pool_name?: string } | undefined)?.pool_name === 'watched',
        20_000,
      );
      expect(alert!.headers['x-request-id']).toBeUndefined();
    } finally {
      await origin.stop();
    }
  });

  it('function responses carry a cf-ray id, and a cron run asked for by an API call logs its id', async () => {
    const source = `export default {
  fetch() { return new Response('ok'); },
  async scheduled() {},
};`;
    expect((await uploadScript(ledge, 'rayed', { modules: { 'index.js': source } })).status).toBe(200);
    expect((await enableWorkersDev(ledge, 'rayed')).status).toBe(200);
    const host = `rayed.${await accountSubdomain(ledge)}.localhost`;
    const port = functionsPort(ledge);
    await waitFor(async () => ((await callFunction(port, host, '/')).status === 200 ? true : undefined));
    const a = await callFunction(port, host, '/');
    const b = await callFunction(port, host, '/');
    expect(a.headers['cf-ray']).toMatch(/^[0-9a-f]{16}-LDG$/);
    expect(b.headers['cf-ray']).toMatch(/^[0-9a-f]{16}-LDG$/);
    expect(a.headers['cf-ray']).not.toBe(b.headers['cf-ray']);

    const triggered = await call('POST', `/accounts/${ledge.accountId}/workers/scripts/rayed/schedules/trigger`, {
      cron: '*/5 * * * *',
    });
    expect(triggered.status).toBe(200);
    expect(records.find((r) => r['msg'] === 'cron trigger ran' && r['script'] === 'rayed')).toMatchObject({
      request_id: triggered.requestId,
      status: 'ok',
    });
  });
});
