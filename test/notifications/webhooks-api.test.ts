import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookTypeOf } from '../../src/notifications/webhook-type.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { alerting, call } from './api-helpers.ts';
import { startWebhookReceiver, type WebhookReceiver } from './receivers.ts';

describe('webhook destinations API', () => {
  let ledge: TestLedge;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    ledge = await startLedge();
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await ledge.close();
    await receiver.close();
  });

  const count = async () =>
    ((await call(ledge, 'GET', `${alerting(ledge)}/destinations/webhooks`)).body.result as unknown[]).length;

  it('sends a test message with the secret header on create, and never returns the secret', async () => {
    const before = receiver.received.length;
    const created = await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, {
      name: 'ops hook',
      url: receiver.url,
      secret: 's3cret-value',
    });
    expect(created.status).toBe(200);
    const id = (created.body.result as { id: string }).id;
    expect(Object.keys(created.body.result as object)).toEqual(['id']);

    const test = receiver.received[before];
    expect(test?.headers['cf-webhook-auth']).toBe('s3cret-value');
    expect(test?.headers['content-type']).toBe('application/json');
    expect(String(test?.body['text'])).toMatch(/^Hello World! This is a test message/);

    const got = await call(ledge, 'GET', `${alerting(ledge)}/destinations/webhooks/${id}`);
    expect(got.body.result).toMatchObject({
      id,
      name: 'ops hook',
      url: receiver.url,
      type: 'generic',
    });
    // Never failed: no last_failure at all (the SDK types it an optional string, not null).
    expect(got.body.result).not.toHaveProperty('last_failure');
    expect((got.body.result as { last_success: string | null }).last_success).not.toBeNull();
    const listed = await call(ledge, 'GET', `${alerting(ledge)}/destinations/webhooks`);
    for (const text of [JSON.stringify(got.body), JSON.stringify(listed.body)]) {
      expect(text).not.toContain('s3cret-value');
      expect(text).not.toContain('secret');
    }
    // Encrypted at rest: the database does not hold the plaintext either.
    const row = await ledge.server.platform.db.get<{ secret_sealed: string }>(
      'SELECT secret_sealed FROM notification_webhooks WHERE id = ?',
      [id],
    );
    expect(row?.secret_sealed).toBeTruthy();
    expect(row?.secret_sealed).not.toContain('s3cret-value');
  });

  it('refuses a receiver that answers non-2xx to the test message, creating nothing', async () => {
    const before = await count();
    receiver.status = 500;
    try {
      const { status, body } = await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, {
        name: 'bad',
        url: receiver.url,
      });
      expect(status).toBe(400);
      expect(body.errors[0]?.code).toBe(17008);
      expect(body.errors[0]?.message).toMatch(/did not accept the test message: .* answered HTTP 500/);
    } finally {
      receiver.status = 200;
    }
    expect(await count()).toBe(before);
  });

  it('refuses a receiver that cannot be reached', async () => {
    const closed = await startWebhookReceiver();
    await closed.close();
    const { status, body } = await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, {
      name: 'gone',
      url: closed.url,
    });
    expect(status).toBe(400);
    expect(body.errors[0]?.code).toBe(17008);
    expect(body.errors[0]?.message).toMatch(/ECONNREFUSED/);
  });

  it('refuses a URL that is not http(s)', async () => {
    for (const url of ['not a url', 'ftp://example.com/hook']) {
      const { status, body } = await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, {
        name: 'x',
        url,
      });
      expect(status).toBe(400);
      expect(body.errors[0]?.code).toBe(17009);
    }
  });

  it('refuses a body without name or url', async () => {
    const { status, body } = await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, {
      url: receiver.url,
    });
    expect(status).toBe(400);
    expect(body.errors[0]?.message).toMatch(/name/);
  });

  it('updates a destination (keeping the secret when none is given) and deletes it', async () => {
    const id = (
      (
        await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, {
          name: 'a',
          url: receiver.url,
          secret: 'keep-me',
        })
      ).body.result as { id: string }
    ).id;
    const before = receiver.received.length;
    const updated = await call(ledge, 'PUT', `${alerting(ledge)}/destinations/webhooks/${id}`, {
      name: 'renamed',
      url: receiver.url,
    });
    expect(updated.status).toBe(200);
    // The test message of an update that keeps the secret is signed with the stored one.
    expect(receiver.received[before]?.headers['cf-webhook-auth']).toBe('keep-me');
    const rotated = await call(ledge, 'PUT', `${alerting(ledge)}/destinations/webhooks/${id}`, {
      name: 'renamed',
      url: receiver.url,
      secret: 'new-secret',
    });
    expect(rotated.status).toBe(200);
    expect(receiver.received[before + 1]?.headers['cf-webhook-auth']).toBe('new-secret');
    expect((await call(ledge, 'GET', `${alerting(ledge)}/destinations/webhooks/${id}`)).body.result).toMatchObject({
      name: 'renamed',
    });
    const row = await ledge.server.platform.db.get<{ secret_sealed: string | null }>(
      'SELECT secret_sealed FROM notification_webhooks WHERE id = ?',
      [id],
    );
    expect(row?.secret_sealed).not.toBeNull();

    expect((await call(ledge, 'DELETE', `${alerting(ledge)}/destinations/webhooks/${id}`)).status).toBe(200);
    const gone = await call(ledge, 'GET', `${alerting(ledge)}/destinations/webhooks/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.errors[0]?.code).toBe(17011);
  });

  it('refuses to delete a destination a policy still uses', async () => {
    const id = (
      (await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, { name: 'used', url: receiver.url })).body
        .result as { id: string }
    ).id;
    await call(ledge, 'POST', `${alerting(ledge)}/policies`, {
      name: 'uses it',
      enabled: true,
      alert_type: 'load_balancing_health_alert',
      mechanisms: { webhooks: [{ id }] },
    });
    const { status, body } = await call(ledge, 'DELETE', `${alerting(ledge)}/destinations/webhooks/${id}`);
    expect(status).toBe(409);
    expect(body.errors[0]?.message).toMatch(/used by policies uses it/);
  });

  it('derives the type from the URL', () => {
    expect(webhookTypeOf(new URL('https://hooks.slack.com/services/T/B/x'))).toBe('slack');
    expect(webhookTypeOf(new URL('https://discord.com/api/webhooks/1/abc'))).toBe('discord');
    expect(webhookTypeOf(new URL('https://chat.googleapis.com/v1/spaces/x/messages'))).toBe('gchat');
    expect(webhookTypeOf(new URL('http://127.0.0.1:9000/hook'))).toBe('generic');
    expect(webhookTypeOf(new URL('https://slack.example.org/hook'))).toBe('generic');
  });
});
