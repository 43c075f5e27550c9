import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, type TestLedge } from '../helpers/ledge.ts';
import { TestOrigin } from '../load-balancing/helpers.ts';
import { startSmtpReceiver, type ReceivedMail, type SmtpReceiver } from '../notifications/receivers.ts';
import { clientFor } from './fixtures.ts';

const RECIPIENTS = ['ops@example.com', 'oncall@example.com'];
const DEPRECATION = /notification_email is deprecated/;

describe('after the migration, alerts reach the same recipients through the new policy', () => {
  let ledge: TestLedge;
  let smtp: SmtpReceiver;
  let origin: TestOrigin;

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    // Monitors may probe every second in this test (the server's default minimum interval is 5 s).
    ledge = await startLedge({ flags: { smtpUrl: smtp.url }, env: { LEDGE_LB_MIN_INTERVAL: '1' } });
    origin = await TestOrigin.start();
    const api = clientFor(ledge);
    const base = `/accounts/${ledge.accountId}/load_balancers`;
    const monitor = await api.request<{ id: string }>('POST', `${base}/monitors`, {
      body: { type: 'http', interval: 1, timeout: 1, retries: 0, expected_codes: '2xx' },
    });
    await api.request('POST', `${base}/pools`, {
      body: {
        name: 'web',
        monitor: monitor.result.id,
        notification_email: 'ops@example.com, oncall@example.com',
        origins: [{ name: 'origin-a', address: '127.0.0.1', port: origin.port }],
      },
    });
  });
  afterAll(async () => {
    await ledge.close();
    await smtp.close();
    await origin.stop().catch(() => undefined);
  });

  /** The distinct recipients of a set of mails (an origin and its pool both alert). */
  const recipients = (mails: ReceivedMail[]) =>
    [...new Set(mails.flatMap((m) => m.to.map((a) => a.toLowerCase())))].sort();
  const alertsTo = (since: number, health: string) => (mail: ReceivedMail) =>
    smtp.received.indexOf(mail) >= since && !DEPRECATION.test(mail.subject) && mail.subject.includes(health);

  it('before: the legacy path alerts both addresses and sends deprecation notices', async () => {
    origin.mode = { kind: 'status', status: 503 };
    const alerts = await smtp.waitFor(2, alertsTo(0, 'Unhealthy'));
    expect(recipients(alerts)).toEqual([...RECIPIENTS].sort());
    await smtp.waitFor(2, (m) => DEPRECATION.test(m.subject));
    origin.mode = { kind: 'ok' };
    await smtp.waitFor(2, alertsTo(0, 'Healthy'));
  });

  it('after: the same health events reach the same addresses via the policy, and no deprecation notice follows', async () => {
    const { code, stderr } = await runCli(['notifications', 'migrate'], { env: cliEnv(ledge) });
    expect(code, stderr).toBe(0);
    const since = smtp.received.length;

    origin.mode = { kind: 'status', status: 503 };
    const down = await smtp.waitFor(2, alertsTo(since, 'Unhealthy'));
    expect(recipients(down)).toEqual([...RECIPIENTS].sort());
    // Delivered by the policy the migration created, not by the legacy field.
    for (const mail of down) expect(mail.text).toMatch(/Sent by notification policy/);

    origin.mode = { kind: 'ok' };
    const up = await smtp.waitFor(2, alertsTo(since, 'Healthy'));
    expect(recipients(up)).toEqual([...RECIPIENTS].sort());

    // Every mail due is sent and recorded: a stray deprecation notice would be here. There must be none.
    await ledge.server.platform.notifications.dispatcher.settled();
    const after = smtp.received.slice(since);
    expect(after.filter((m) => DEPRECATION.test(m.subject))).toEqual([]);
    expect(after.filter((m) => /lists .* in its notification_email/.test(m.text))).toEqual([]);
  });
});
