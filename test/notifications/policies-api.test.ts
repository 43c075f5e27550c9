import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { alerting, call, createPool } from './api-helpers.ts';
import { startWebhookReceiver, type WebhookReceiver } from './receivers.ts';

describe('notification policies API', () => {
  let ledge: TestLedge;
  let receiver: WebhookReceiver;
  let poolId: string;
  let webhookId: string;

  beforeAll(async () => {
    ledge = await startLedge();
    receiver = await startWebhookReceiver();
    poolId = await createPool(ledge, { name: 'pool-a' });
    const created = await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, {
      name: 'ops',
      url: receiver.url,
    });
    webhookId = (created.body.result as { id: string }).id;
  });
  afterAll(async () => {
    await ledge.close();
    await receiver.close();
  });

  const valid = () => ({
    name: 'pool health',
    enabled: true,
    alert_type: 'load_balancing_health_alert',
    mechanisms: { webhooks: [{ id: webhookId }], email: [{ id: 'ops@example.com' }] },
    filters: { pool_id: [poolId], new_health: ['Unhealthy'], event_source: ['pool', 'origin'] },
    alert_interval: '30m',
  });

  it('lists the load-balancing alerts with their filter options', async () => {
    const { status, body } = await call(ledge, 'GET', `${alerting(ledge)}/available_alerts`);
    expect(status).toBe(200);
    const alerts = Object.values(
      body.result as Record<string, { type: string; filter_options: { Key: string }[] }[]>,
    ).flat();
    const health = alerts.find((a) => a.type === 'load_balancing_health_alert');
    expect(health?.filter_options.map((f) => f.Key)).toEqual(['pool_id', 'new_health', 'event_source']);
    expect(alerts.some((a) => a.type === 'load_balancing_pool_enablement_alert')).toBe(true);
  });

  it('says which mechanisms are eligible', async () => {
    const { body } = await call(ledge, 'GET', `${alerting(ledge)}/destinations/eligible`);
    const result = body.result as Record<string, { eligible: boolean; type: string }[]>;
    expect(result['webhook']?.[0]).toMatchObject({ eligible: true, type: 'webhook' });
    expect(result['email']?.[0]).toMatchObject({ eligible: true, type: 'email' });
  });

  it('creates, reads, lists, updates and deletes a policy', async () => {
    const created = await call(ledge, 'POST', `${alerting(ledge)}/policies`, valid());
    expect(created.status).toBe(200);
    const id = (created.body.result as { id: string }).id;
    expect(id).toMatch(/^[0-9a-f]{32}$/);

    const got = await call(ledge, 'GET', `${alerting(ledge)}/policies/${id}`);
    expect(got.body.result).toMatchObject({ ...valid(), id, description: '' });

    const listed = await call(ledge, 'GET', `${alerting(ledge)}/policies`);
    expect((listed.body.result as { id: string }[]).map((p) => p.id)).toContain(id);

    const updated = await call(ledge, 'PUT', `${alerting(ledge)}/policies/${id}`, {
      enabled: false,
      filters: { new_health: ['Healthy'] },
    });
    expect(updated.body.result).toEqual({ id });
    const after = await call(ledge, 'GET', `${alerting(ledge)}/policies/${id}`);
    expect(after.body.result).toMatchObject({
      name: 'pool health',
      enabled: false,
      filters: { new_health: ['Healthy'] },
    });

    expect((await call(ledge, 'DELETE', `${alerting(ledge)}/policies/${id}`)).status).toBe(200);
    const gone = await call(ledge, 'GET', `${alerting(ledge)}/policies/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.errors[0]?.code).toBe(17010);
  });

  const refused = async (body: unknown, code: number, message: RegExp) => {
    const before = ((await call(ledge, 'GET', `${alerting(ledge)}/policies`)).body.result as unknown[]).length;
    const { status, body: answer } = await call(ledge, 'POST', `${alerting(ledge)}/policies`, body);
    expect(status).toBe(400);
    expect(answer.success).toBe(false);
    expect(answer.errors[0]?.code).toBe(code);
    expect(answer.errors[0]?.message).toMatch(message);
    // Nothing half-written.
    expect(((await call(ledge, 'GET', `${alerting(ledge)}/policies`)).body.result as unknown[]).length).toBe(before);
  };

  it('refuses an unknown alert type', async () => {
    await refused(
      { ...valid(), alert_type: 'dos_attack_l7' },
      17002,
      /alert_type "dos_attack_l7" is not an available alert type/,
    );
  });

  it('refuses a filter key the alert type does not accept', async () => {
    await refused(
      { ...valid(), filters: { zones: ['x'] } },
      17003,
      /filter "zones" is not allowed for load_balancing_health_alert/,
    );
  });

  it('refuses new_health outside Healthy/Unhealthy', async () => {
    await refused(
      { ...valid(), filters: { new_health: ['Degraded'] } },
      17004,
      /filters.new_health: "Degraded" is not one of Healthy, Unhealthy/,
    );
  });

  it('refuses event_source outside pool/origin', async () => {
    await refused(
      { ...valid(), filters: { event_source: ['monitor'] } },
      17004,
      /filters.event_source: "monitor" is not one of pool, origin/,
    );
  });

  it('refuses a pool id that is not in the account', async () => {
    await refused(
      { ...valid(), filters: { pool_id: ['ffffffffffffffffffffffffffffffff'] } },
      17005,
      /pool ffffffffffffffffffffffffffffffff does not exist/,
    );
  });

  it('refuses a webhook id that is not in the account', async () => {
    await refused(
      { ...valid(), mechanisms: { webhooks: [{ id: 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee' }] } },
      17006,
      /webhook eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee does not exist/,
    );
  });

  it('refuses an invalid email address', async () => {
    await refused(
      { ...valid(), mechanisms: { email: [{ id: 'not-an-address' }] } },
      17007,
      /"not-an-address" is not a valid email address/,
    );
  });

  it('refuses a filter that lists no value', async () => {
    await refused({ ...valid(), filters: { pool_id: [] } }, 17001, /filters.pool_id: must list at least one value/);
  });

  it('refuses more than 1,000 values in a filter other than pool_id, naming it', async () => {
    const many = Array.from({ length: 1001 }, () => 'Unhealthy');
    await refused(
      { ...valid(), filters: { ...valid().filters, new_health: many } },
      17001,
      /filters.new_health: Too big/,
    );
  });

  it('refuses a policy without any delivery target', async () => {
    await refused({ ...valid(), mechanisms: {} }, 17001, /at least one email address or webhook/);
  });

  it('refuses a body missing required fields, with the field path', async () => {
    await refused({ name: 'x', alert_type: 'load_balancing_health_alert' }, 17001, /enabled|mechanisms/);
  });

  it('refuses a malformed alert_interval', async () => {
    await refused({ ...valid(), alert_interval: 'soon' }, 17001, /alert_interval: must be a duration/);
  });

  it('validates an update as a whole and leaves the policy untouched on failure', async () => {
    const id = ((await call(ledge, 'POST', `${alerting(ledge)}/policies`, valid())).body.result as { id: string }).id;
    const { status, body } = await call(ledge, 'PUT', `${alerting(ledge)}/policies/${id}`, {
      filters: { new_health: ['Sick'] },
    });
    expect(status).toBe(400);
    expect(body.errors[0]?.code).toBe(17004);
    const after = await call(ledge, 'GET', `${alerting(ledge)}/policies/${id}`);
    expect((after.body.result as { filters: unknown }).filters).toEqual(valid().filters);
  });

  it('is account-level only: another account id is refused', async () => {
    const { status, body } = await call(
      ledge,
      'GET',
      '/accounts/abcdefabcdefabcdefabcdefabcdefab/alerting/v3/policies',
    );
    expect(status).toBe(403);
    expect(body.errors[0]?.code).toBe(9109);
    const zone = await call(ledge, 'GET', '/zones/abcdefabcdefabcdefabcdefabcdefab/alerting/v3/policies');
    expect(zone.status).toBe(404);
  });
});
