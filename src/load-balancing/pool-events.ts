import { SyncEventBus } from '../shared/sync-event-bus.ts';

/**
 * A pool was switched on or off (PUT or PATCH changed `enabled`). Published by the pool store's write,
 * inside its transaction, with the stored value before the write: two concurrent edits that both
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

/** Load balancing never imports notifications: this bus is the contract (see SyncEventBus). */
export class PoolEnablementBus extends SyncEventBus<PoolEnablementEvent> {}
