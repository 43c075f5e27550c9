import { inTransactionScope } from '../../src/db/index.ts';
import type { HealthEvent } from '../../src/load-balancing/index.ts';
import type { Platform } from '../../src/server/index.ts';

let nextId = 1_000_000;

/**
 * Publishes a health event the way the load-balancing health store does: on the platform's real bus,
 * inside a database transaction whose scope the listeners write with (it commits, or rolls back when
 * `fail` is set).
 */
export async function publishEvent(
  platform: Platform,
  event: Partial<HealthEvent> & Pick<HealthEvent, 'poolId'>,
  fail = false,
): Promise<HealthEvent> {
  const full: HealthEvent = {
    id: nextId++,
    occurredAt: new Date().toISOString(),
    accountId: '0123456789abcdef0123456789abcdef',
    poolName: 'pool-a',
    eventSource: 'origin',
    originName: 'origin-1',
    originAddress: '127.0.0.1',
    newHealth: 'Unhealthy',
    reason: 'TCP connection failed',
    legacyNotificationEmail: '',
    ...event,
  };
  await inTransactionScope(platform.db, async (scope) => {
    await platform.healthEvents.publish(full, scope);
    if (fail) throw new Error('the producer failed after publishing');
  });
  return full;
}
