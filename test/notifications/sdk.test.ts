import Cloudflare from 'cloudflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { createPool } from './api-helpers.ts';
import { publishEvent } from './events.ts';
import { startWebhookReceiver, type WebhookReceiver } from './receivers.ts';
import { poll } from '../helpers/wait.ts';

describe('the official cloudflare SDK against the alerting API', () => {
  let ledge: TestLedge;
  let receiver: WebhookReceiver;
  let client: Cloudflare;

  beforeAll(async () => {
    ledge = await startLedge();
    receiver = await startWebhookReceiver();
    client = new Cloudflare({ baseURL: ledge.apiUrl, apiEmail: ledge.email, apiKey: ledge.apiKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await ledge.close();
    await receiver.close();
  });

  it('creates a webhook and a policy, lists them, and pages history to the end', async () => {
    const account_id = ledge.accountId;
    const poolId = await createPool(ledge, { name: 'sdk-pool' });
    const alerts = await client.alerting.availableAlerts.list({ account_id });
    expect(
      Object.values(alerts)
        .flat()
        .map((a) => a.type),
    ).toContain('load_balancing_health_alert');
    const eligible = await client.alerting.destinations.eligible.get({ account_id });
    expect(eligible['webhook']?.[0]?.eligible).toBe(true);

    const webhook = await client.alerting.destinations.webhooks.create({
      account_id,
      name: 'sdk',
      url: receiver.url,
      secret: 'sdk-secret',
    });
    expect(webhook.id).toMatch(/^[0-9a-f]{32}$/);
    const policy = await client.alerting.policies.create({
      account_id,
      name: 'sdk policy',
      enabled: true,
      alert_type: 'load_balancing_health_alert',
      mechanisms: { webhooks: [{ id: webhook.id! }] },
      filters: { pool_id: [poolId], new_health: ['Unhealthy'] },
    });
    const policies = [];
    for await (const p of client.alerting.policies.list({ account_id })) policies.push(p);
    expect(policies.map((p) => p.id)).toEqual([policy.id]);
    const webhooks = [];
    for await (const w of client.alerting.destinations.webhooks.list({ account_id })) webhooks.push(w);
    expect(webhooks[0]).toMatchObject({ id: webhook.id, type: 'generic' });

    for (let i = 0; i < 7; i++)
      await publishEvent(ledge.server.platform, { poolId, poolName: 'sdk-pool', originName: `o${i}` });
    await receiver.waitFor(7, (hook) => hook.body['policy_id'] === policy.id);
    // History is written once the outcome of each send commits.
    let history: { policy_id?: string }[] = [];
    await poll(
      async () => {
        history = [];
        for await (const item of client.alerting.history.list({ account_id, per_page: 5 })) history.push(item);
        return history.length >= 7;
      },
      { timeoutMs: 10_000, everyMs: 100 },
    );
    expect(history).toHaveLength(7);
    expect(history.every((item) => item.policy_id === policy.id)).toBe(true);

    await expect(
      client.alerting.policies.create({
        account_id,
        name: 'bad',
        enabled: true,
        alert_type: 'load_balancing_health_alert',
        mechanisms: { email: [{ id: 'nope' }] },
      }),
    ).rejects.toMatchObject({ status: 400 });
  });
});
