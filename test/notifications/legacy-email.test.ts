import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { ManualClock } from '../helpers/manual-clock.ts';
import { alerting, call, createPool } from './api-helpers.ts';
import { publishEvent } from './events.ts';
import { startSmtpReceiver, type ReceivedMail, type SmtpReceiver } from './receivers.ts';

const NOTICE = /notification_email is deprecated/;
const isNotice = (to: string) => (mail: ReceivedMail) => mail.to.includes(to) && NOTICE.test(mail.subject);
const isLegacyAlert = (to: string) => (mail: ReceivedMail) =>
  mail.to.includes(to) && /Pool health alert/.test(mail.subject);

describe('legacy pool notification_email path', () => {
  let ledge: TestLedge;
  let smtp: SmtpReceiver;
  let legacyPool: string;
  // Deprecation intervals are measured on this clock: the test moves it past an interval instead of waiting.
  const clock = new ManualClock();
  /** Every alert due is sent and recorded: a notice not sent by then is not sent at all. */
  const settle = () => ledge.server.platform.notifications.dispatcher.settled();

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    // Deprecation notices at most every 2 s per address here (24 h by default), so the test can see the interval pass.
    process.env['LEDGE_NOTIFY_DEPRECATION_INTERVAL'] = '2';
    ledge = await startLedge({ flags: { smtpUrl: smtp.url }, clock });
    delete process.env['LEDGE_NOTIFY_DEPRECATION_INTERVAL'];
    legacyPool = await createPool(ledge, { name: 'legacy-pool', notification_email: 'a@example.com, b@example.com' });
    await createPool(ledge, { name: 'second-legacy', notification_email: 'c@example.com' });
  });
  afterAll(async () => {
    await ledge.close();
    await smtp.close();
  });

  const legacyEvent = (email = 'a@example.com, b@example.com') =>
    publishEvent(ledge.server.platform, {
      poolId: legacyPool,
      poolName: 'legacy-pool',
      legacyNotificationEmail: email,
    });

  it('mails the alert to every legacy address, plus one deprecation notice each', async () => {
    await legacyEvent();
    const [alertA] = await smtp.waitFor(1, isLegacyAlert('a@example.com'));
    await smtp.waitFor(1, isLegacyAlert('b@example.com'));
    const [noticeA] = await smtp.waitFor(1, isNotice('a@example.com'));
    await smtp.waitFor(1, isNotice('b@example.com'));
    expect(alertA?.text).toContain('origin origin-1 (127.0.0.1) of pool legacy-pool is now Unhealthy');
    expect(alertA?.text).toContain('notification_email field, which is deprecated');
    // The notice counts the pools still to migrate and says how to migrate.
    expect(noticeA?.text).toContain('2 load balancing pool(s)');
    expect(noticeA?.text).toContain('load_balancing_health_alert');
  });

  it('sends at most one deprecation notice per address per interval', async () => {
    await legacyEvent();
    await smtp.waitFor(2, isLegacyAlert('a@example.com'));
    await settle();
    expect(smtp.received.filter(isNotice('a@example.com'))).toHaveLength(1);

    await clock.advance(2_100);
    await legacyEvent();
    await smtp.waitFor(2, isNotice('a@example.com'));
    await smtp.waitFor(3, isLegacyAlert('a@example.com'));
  });

  it('keeps sending notices while any pool keeps a legacy email, and stops once none does', async () => {
    // One pool migrated, the other not: still incomplete.
    await call(ledge, 'PATCH', `/accounts/${ledge.accountId}/load_balancers/pools/${legacyPool}`, {
      notification_email: '',
    });
    const status = await call(ledge, 'GET', `${alerting(ledge)}/legacy_migration`);
    expect(status.body.result).toMatchObject({ complete: false, pools_with_legacy_email: 1 });

    await clock.advance(2_100);
    await legacyEvent('a@example.com');
    const notices = await smtp.waitFor(3, isNotice('a@example.com'));
    expect(notices[2]?.text).toContain('1 load balancing pool(s)');

    // Empty every pool's legacy email (the bulk PATCH of the migration guide): migration complete.
    const patched = await call(ledge, 'PATCH', `/accounts/${ledge.accountId}/load_balancers/pools`, {
      notification_email: '',
    });
    expect(patched.status).toBe(200);
    const done = await call(ledge, 'GET', `${alerting(ledge)}/legacy_migration`);
    expect(done.body.result).toMatchObject({ complete: true, pools_with_legacy_email: 0 });

    // An event raised with a stale legacy address still gets its alert, but no notice goes out any more.
    await clock.advance(2_100);
    const since = new Date(clock.now()).toISOString();
    await legacyEvent('a@example.com');
    await smtp.waitFor(5, isLegacyAlert('a@example.com'));
    await settle();
    expect(smtp.received.filter(isNotice('a@example.com'))).toHaveLength(3);
    const history = await call(ledge, 'GET', `${alerting(ledge)}/history?since=${encodeURIComponent(since)}`);
    const skipped = (history.body.result as { status: string; name: string; error: string }[]).find(
      (h) => h.status === 'skipped',
    );
    expect(skipped).toMatchObject({ name: 'notification_email deprecation notice' });
    expect(skipped?.error).toMatch(/no pool of the account keeps a legacy notification_email/);

    // Events on pools without legacy email send no legacy mail at all.
    const count = smtp.received.length;
    await publishEvent(ledge.server.platform, { poolId: legacyPool, legacyNotificationEmail: '' });
    await settle();
    expect(smtp.received).toHaveLength(count);
  });

  it('reports a pool as migrated once a policy covers it and no legacy email remains', async () => {
    const webhookless = await call(ledge, 'POST', `${alerting(ledge)}/policies`, {
      name: 'replacement',
      enabled: true,
      alert_type: 'load_balancing_health_alert',
      mechanisms: { email: [{ id: 'a@example.com' }] },
      filters: { pool_id: [legacyPool] },
    });
    expect(webhookless.status).toBe(200);
    const status = await call(
      ledge,
      'GET',
      `${alerting(ledge)}/legacy_migration?pool_id=${legacyPool}&pool_id=ffffffffffffffffffffffffffffffff`,
    );
    expect(status.body.result).toMatchObject({
      complete: true,
      health_alert_policies: 1,
      pools: { [legacyPool]: true, ffffffffffffffffffffffffffffffff: false },
    });

    // A pool is migrated on its own terms: another pool gaining a legacy email makes the account
    // incomplete, but the covered pool without one stays migrated.
    const late = await call(ledge, 'POST', `/accounts/${ledge.accountId}/load_balancers/pools`, {
      name: 'late-legacy',
      origins: [{ name: 'o', address: '192.0.2.1' }],
      notification_email: 'late@example.com',
    });
    const lateId = (late.body.result as { id: string }).id;
    const mixed = await call(
      ledge,
      'GET',
      `${alerting(ledge)}/legacy_migration?pool_id=${legacyPool}&pool_id=${lateId}`,
    );
    expect(mixed.body.result).toMatchObject({
      complete: false,
      pools_with_legacy_email: 1,
      pools: { [legacyPool]: true, [lateId]: false },
    });
  });
});
