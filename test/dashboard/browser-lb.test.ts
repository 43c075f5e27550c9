import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { TestOrigin } from '../load-balancing/helpers.ts';
import { alerting, call, createPool } from '../notifications/api-helpers.ts';
import { startSmtpReceiver, startWebhookReceiver, type SmtpReceiver } from '../notifications/receivers.ts';
import { browserFixture, origin } from './helpers.ts';
import { screenshot } from './shots.ts';

// Monitors may probe every second in tests (the server default minimum is 5 s).
process.env['LEDGE_LB_MIN_INTERVAL'] = '1';

let ledge: TestLedge;
let smtp: SmtpReceiver;
let a: TestOrigin;
let b: TestOrigin;
let poolId: string;
const { signedInPage } = browserFixture(async () => {
  smtp = await startSmtpReceiver();
  return (ledge = await startLedge({ flags: { smtpUrl: smtp.url } }));
});

beforeAll(async () => {
  a = await TestOrigin.start();
  b = await TestOrigin.start();
  const monitor = await call(ledge, 'POST', `/accounts/${ledge.accountId}/load_balancers/monitors`, {
    type: 'http',
    interval: 1,
    timeout: 1,
    retries: 0,
    expected_codes: '2xx',
  });
  expect(monitor.status).toBe(200);
  poolId = await createPool(ledge, {
    name: 'web',
    monitor: (monitor.body.result as { id: string }).id,
    minimum_origins: 2,
    origins: [
      { name: 'origin-a', address: '127.0.0.1', port: a.port },
      { name: 'origin-b', address: '127.0.0.1', port: b.port },
    ],
  });
});
// Runs before the fixture's own (hooks run in reverse): the receivers and origins go first.
afterAll(async () => {
  await smtp?.close();
  await a?.stop().catch(() => undefined);
  await b?.stop().catch(() => undefined);
});

interface Policy {
  id: string;
  name: string;
  alert_type: string;
  enabled: boolean;
  mechanisms: { email?: { id: string }[] };
  filters: Record<string, string[]>;
}

describe('dashboard in Chromium: load balancing and notifications', () => {
  it("creates a health alert through the spec's path: Traffic > Load Balancing > Manage Pools > Edit > Create a Health Alert", async () => {
    const { page, errors } = await signedInPage();
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('button', { name: 'Traffic' }).click();
    await nav.getByRole('link', { name: 'Load Balancing' }).click();
    await page.getByRole('link', { name: 'Manage Pools' }).click();
    const row = page.getByRole('row').filter({ hasText: 'web' });
    await row.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit pool web' }).waitFor();
    // Both origins answer: the live table shows them healthy, with a round-trip time.
    await page
      .getByRole('table', { name: 'Origins' })
      .getByRole('row')
      .filter({ hasText: 'origin-b' })
      .getByText('Healthy')
      .waitFor();
    await screenshot(page, 'pool-edit');
    await page.getByRole('button', { name: 'Create a Health Alert' }).click();

    // The form arrives filled: this pool, Healthy and Unhealthy, pool and origin, the user's email.
    const form = page.getByRole('form', { name: 'Notification' });
    await form.waitFor();
    await expect(form.getByRole('checkbox', { name: 'web' }).isChecked()).resolves.toBe(true);
    for (const name of ['Healthy', 'Unhealthy', 'Pool', 'Origin'])
      await expect(form.getByRole('checkbox', { name, exact: true }).isChecked()).resolves.toBe(true);
    await expect(form.getByLabel('Email recipients').inputValue()).resolves.toBe(ledge.email);
    await screenshot(page, 'health-alert-form');
    await form.getByLabel('Name', { exact: true }).fill('web health');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('table', { name: 'Notification policies' }).getByText('web health').waitFor();

    const listed = await call(ledge, 'GET', `${alerting(ledge)}/policies`);
    const policy = (listed.body.result as Policy[]).find((p) => p.name === 'web health');
    expect(policy).toMatchObject({
      alert_type: 'load_balancing_health_alert',
      enabled: true,
      mechanisms: { email: [{ id: ledge.email }] },
      filters: { pool_id: [poolId], new_health: ['Healthy', 'Unhealthy'], event_source: ['pool', 'origin'] },
    });
    expect(errors).toEqual([]);
  });

  it('shows the pool turn Unhealthy on the open page, live, and the alert in the history', async () => {
    const { page, errors } = await signedInPage();
    await page.goto(`${origin(ledge)}/#/lb/pools`);
    const cell = page.locator(`[data-pool-health="${poolId}"]`);
    await cell.getByText('Healthy').waitFor();
    // The pool list never polls: only the live health events change this cell, with no reload of the page.
    await b.stop();
    await cell.getByText('Unhealthy').waitFor({ timeout: 30_000 });
    const event = await ledge.server.platform.db.get<{ occurred_at: string }>(
      "SELECT occurred_at FROM lb_health_events WHERE pool_id = ? AND event_source = 'pool' AND new_health = 'Unhealthy' ORDER BY id DESC LIMIT 1",
      [poolId],
    );
    expect(event).toBeDefined();
    await screenshot(page, 'pools');

    // The pool's charts (uPlot): health share and RTT per minute, from the samples the checks left.
    await page.goto(`${origin(ledge)}/#/lb/pools/${poolId}/charts`);
    await page.getByRole('heading', { name: 'Health of web' }).waitFor();
    await page.locator('.chart').nth(1).locator('canvas').waitFor();
    expect(await page.locator('.chart canvas').count()).toBe(2);
    await page.getByRole('link', { name: 'Last day' }).click();
    await page.getByText('One point per 5 minute(s).').waitFor();
    await page.getByRole('link', { name: 'Last hour' }).click();
    await page.locator('.chart').nth(1).locator('canvas').waitFor();
    await screenshot(page, 'pool-charts');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Notifications' }).click();
    await page.getByRole('link', { name: 'Alert history' }).click();
    const history = page.getByRole('table', { name: /Alert history/ });
    // The email to the policy's recipient, delivered to the SMTP server.
    for (let i = 0; i < 20; i++) {
      if (
        (await history.getByRole('row').filter({ hasText: 'web health' }).filter({ hasText: 'delivered' }).count()) > 0
      )
        break;
      await page.waitForTimeout(500);
      await page.reload();
    }
    await history.getByRole('row').filter({ hasText: 'web health' }).filter({ hasText: 'delivered' }).first().waitFor();
    await page.locator('.chart canvas').first().waitFor();
    // The chart's counts come from the server's hourly totals, and include this delivery.
    await page.getByText(/^[1-9]\d* delivered and \d+ failed attempts in the period\.$/).waitFor({ state: 'attached' });
    await screenshot(page, 'alert-history');
    expect(smtp.received.length).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });

  it('migrates 60 legacy pools from notification_email, with a preview, progress and the result', async () => {
    const groups = ['ops@example.com', 'ops@example.com, web@example.com', 'db@example.com'];
    for (let i = 0; i < 60; i++) {
      await createPool(ledge, {
        name: `legacy-${String(i).padStart(2, '0')}`,
        notification_email: groups[i % groups.length]!,
        origins: [{ name: 'o', address: '127.0.0.1', port: a.port }],
      });
    }
    const { page, errors } = await signedInPage();
    const banner = page.getByRole('region', { name: 'Legacy notification emails' });
    await banner.getByText('60 pool(s) still use the deprecated notification_email.').waitFor();
    await banner.getByRole('link', { name: 'Migrate to notifications' }).click();
    await page.getByRole('heading', { name: 'Email migration' }).waitFor();
    await page
      .getByRole('table', { name: /Pools with a legacy email/ })
      .getByText('legacy-00')
      .waitFor();

    await page.getByRole('button', { name: 'Preview policies' }).click();
    const preview = page.getByRole('table', { name: 'Policies the migration will create or extend' });
    await preview.waitFor();
    expect(await preview.locator('tbody tr').count()).toBe(3);
    await screenshot(page, 'migration');
    // A preview changes nothing.
    const before = await call(ledge, 'GET', `${alerting(ledge)}/legacy_migration`);
    expect((before.body.result as { pools_with_legacy_email: number }).pools_with_legacy_email).toBe(60);

    await page.getByRole('button', { name: 'Run migration' }).click();
    await page.getByRole('heading', { name: 'Migration complete' }).waitFor({ timeout: 60_000 });
    await expect(page.getByRole('progressbar', { name: 'Migration progress' }).getAttribute('value')).resolves.toBe(
      '100',
    );
    expect(
      await page
        .getByRole('list', { name: 'Migration steps' })
        .getByText(/^page \d+: cleared/)
        .count(),
    ).toBe(2);

    const after = await call(ledge, 'GET', `${alerting(ledge)}/legacy_migration`);
    expect(after.body.result).toMatchObject({ complete: true, pools_with_legacy_email: 0 });
    const policies = (await call(ledge, 'GET', `${alerting(ledge)}/policies`)).body.result as Policy[];
    const migrated = policies.filter((p) => p.alert_type === 'load_balancing_health_alert' && p.name !== 'web health');
    expect(migrated).toHaveLength(3);
    expect(migrated.reduce((sum, p) => sum + (p.filters['pool_id']?.length ?? 0), 0)).toBe(60);
    // The banner goes once no legacy email remains.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.waitForLoadState('networkidle');
    expect(await banner.count()).toBe(0);
    expect(errors).toEqual([]);
  }, 180_000);

  it('tests a policy: its webhook gets the test message, the outcome shows, and a refusing receiver shows as failed', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const hook = await call(ledge, 'POST', `${alerting(ledge)}/destinations/webhooks`, {
        name: 'pager hook',
        url: receiver.url,
        secret: 'kept-secret',
      });
      expect(hook.status).toBe(200);
      const hookId = (hook.body.result as { id: string }).id;
      const policy = await call(ledge, 'POST', `${alerting(ledge)}/policies`, {
        name: 'tested policy',
        alert_type: 'load_balancing_health_alert',
        enabled: true,
        mechanisms: { webhooks: [{ id: hookId }], email: [{ id: 'ops@example.com' }] },
        filters: { pool_id: [poolId], new_health: ['Unhealthy'] },
      });
      expect(policy.status).toBe(200);
      const { page, errors } = await signedInPage();
      await page.goto(`${origin(ledge)}/#/notifications`);
      const before = receiver.received.length;
      await page.getByRole('button', { name: 'Test tested policy' }).click();
      await page
        .getByRole('status')
        .getByText(/pager hook: test message accepted/)
        .waitFor();
      await expect(page.getByRole('status').textContent()).resolves.toContain('email recipient(s): not tested');
      expect(receiver.received.length).toBe(before + 1);
      // Signed with the stored secret, as real alerts are.
      expect(receiver.received.at(-1)!.headers['cf-webhook-auth']).toBe('kept-secret');

      receiver.status = 500;
      await page.getByRole('button', { name: 'Test tested policy' }).click();
      await page
        .getByRole('alert')
        .getByText(/pager hook: failed/)
        .waitFor();
      // The destinations page tests one webhook the same way.
      receiver.status = 200;
      await page.goto(`${origin(ledge)}/#/notifications/destinations`);
      await page.getByRole('button', { name: 'Test pager hook' }).click();
      await page
        .getByRole('status')
        .getByText(/pager hook: test message accepted/)
        .waitFor();
      expect(errors).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});
