import type { TransactionScope } from '../db/index.ts';
import { TransactionalEventBus } from '../shared/transactional-event-bus.ts';

/**
 * A pool was switched on or off (PUT or PATCH changed `enabled`). Published by the pool store's write,
 * inside its transaction (listeners get its scope), with the stored value before the write: two concurrent edits that both
 * disable a pool raise one event, not two.
 */
export interface PoolEnablementEvent {
  /** RFC 3339 time of the change (the pool's modified_on). */
  occurredAt: string;
  accountId: string;
  poolId: string;
  poolName: string;
  enabled: boolean;
}

/** Load balancing never imports notifications: this bus is the contract (see TransactionalEventBus). */
export class PoolEnablementBus extends TransactionalEventBus<PoolEnablementEvent, TransactionScope> {}
