import { describe, expect, it } from 'vitest';
import type { HealthEvent } from '../../src/load-balancing/index.ts';
import { backoffMs } from '../../src/notifications/dispatcher.ts';
import { policyMatches } from '../../src/notifications/fanout.ts';
import { legacyAddresses } from '../../src/notifications/legacy.ts';
import { intervalMs } from '../../src/notifications/schemas.ts';
import type { Policy } from '../../src/notifications/types.ts';

const event: HealthEvent = {
  id: 1,
  occurredAt: '2026-11-21T10:00:00.000Z',
  accountId: 'a'.repeat(32),
  poolId: 'p'.repeat(32),
  poolName: 'web',
  eventSource: 'origin',
  originName: 'o1',
  originAddress: '192.0.2.1',
  newHealth: 'Unhealthy',
  reason: 'HTTP timeout occurred',
  legacyNotificationEmail: '',
};

const policy = (filters: Record<string, string[]>): Policy => ({
  id: 'x',
  account_id: event.accountId,
  name: 'p',
  description: '',
  enabled: true,
  alert_type: 'load_balancing_health_alert',
  mechanisms: { webhooks: [{ id: 'w' }] },
  filters,
  alert_interval: null,
  created: '',
  modified: '',
});

describe('policy matching', () => {
  it('matches everything when a filter is missing', () => {
    expect(policyMatches(policy({}), event)).toBe(true);
  });

  it('requires every present filter to list the event value', () => {
    expect(
      policyMatches(policy({ pool_id: [event.poolId], new_health: ['Unhealthy'], event_source: ['origin'] }), event),
    ).toBe(true);
    expect(policyMatches(policy({ pool_id: ['q'.repeat(32)] }), event)).toBe(false);
    expect(policyMatches(policy({ new_health: ['Healthy'] }), event)).toBe(false);
    expect(policyMatches(policy({ event_source: ['pool'] }), event)).toBe(false);
    expect(
      policyMatches(policy({ new_health: ['Healthy', 'Unhealthy'], event_source: ['pool', 'origin'] }), event),
    ).toBe(true);
  });
});

describe('helpers', () => {
  it('parses alert_interval durations', () => {
    expect(intervalMs('30m')).toBe(30 * 60_000);
    expect(intervalMs('1h30m')).toBe(90 * 60_000);
    expect(intervalMs('45s')).toBe(45_000);
  });

  it('backs off exponentially with jitter, capped', () => {
    const retry = { baseDelayMs: 1_000, maxDelayMs: 60_000, giveUpAfterMs: 1 };
    expect(backoffMs(1, retry, () => 0.5)).toBe(1_000);
    expect(backoffMs(2, retry, () => 0.5)).toBe(2_000);
    expect(backoffMs(4, retry, () => 0.5)).toBe(8_000);
    expect(backoffMs(20, retry, () => 0.5)).toBe(60_000);
    expect(backoffMs(3, retry, () => 0)).toBe(3_200);
    expect(backoffMs(3, retry, () => 1)).toBe(4_800);
  });

  it('splits a legacy notification_email field into distinct addresses', () => {
    expect(legacyAddresses('')).toEqual([]);
    expect(legacyAddresses(' a@example.com,b@example.com , a@example.com,')).toEqual([
      'a@example.com',
      'b@example.com',
    ]);
  });
});
