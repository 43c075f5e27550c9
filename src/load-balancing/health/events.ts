import type { TransactionScope } from '../../db/index.ts';
import { TransactionalEventBus } from '../../shared/transactional-event-bus.ts';

/**
 * Health events: the contract between load balancing (producer) and notifications (consumer).
 *
 * load-balancing never imports notifications. The health checker records every Healthy <-> Unhealthy
 * transition of an origin or a pool in `lb_health_events`, and calls the bus's listeners INSIDE the same
 * database transaction as the state change, with its scope (the transaction handle, and after-commit
 * callbacks). A consumer (notifications) that writes its outbox rows with that handle therefore commits
 * or rolls back together with the event itself.
 */
export type Health = 'Healthy' | 'Unhealthy';
export type EventSource = 'pool' | 'origin';

export interface HealthEvent {
  /** Row id in lb_health_events (monotonic). */
  id: number;
  /** RFC 3339 time of the transition. */
  occurredAt: string;
  accountId: string;
  poolId: string;
  poolName: string;
  eventSource: EventSource;
  /** Set for origin events. */
  originName: string | null;
  originAddress: string | null;
  newHealth: Health;
  /** The failure_reason vocabulary of the health API ("No failures" when healthy). */
  reason: string;
  /** The pool's legacy `notification_email` at the time of the event ("" = none), for the legacy path. */
  legacyNotificationEmail: string;
}

/** Called inside the transaction that records the event; writes with `scope.tx` and must not swallow errors. */
export type HealthEventListener = (event: HealthEvent, scope: TransactionScope) => Promise<void>;

/** Health transitions, published by the health store inside the transaction that records them. */
export class HealthEventBus extends TransactionalEventBus<HealthEvent, TransactionScope> {}
