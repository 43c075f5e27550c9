import type { NewDelivery, OutboxRow } from './outbox.ts';

/** The rows one committed append() wrote, in target order, all sharing everything but the target. */
export interface FreshBatch {
  rows: readonly { id: number; target: string }[];
  delivery: Omit<NewDelivery, 'target'>;
  createdMs: number;
  /** The API request that wrote them, if any. */
  requestId: string | null;
  /** Index of the next row not yet handed out. */
  next: number;
}

/**
 * Outbox rows written by this process, waiting to be handed to its dispatcher in memory (so that it
 * needs no claim UPDATE and no read-back per row). Only a queue: the Outbox adds a batch once its
 * transaction has committed.
 */
export class FreshRows {
  #batches: FreshBatch[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(batch: FreshBatch): void {
    this.#batches.push(batch);
    this.#size += batch.rows.length - batch.next;
  }

  /** Removes and returns the batches written before `createdBeforeMs` (their rows go back to the table). */
  takeOlderThan(createdBeforeMs: number): FreshBatch[] {
    let count = 0;
    while (count < this.#batches.length && this.#batches[count]!.createdMs < createdBeforeMs) count++;
    return this.#removeHead(count);
  }

  /** Up to `max` rows, oldest first. */
  take(max: number): OutboxRow[] {
    const rows: OutboxRow[] = [];
    let done = 0;
    while (rows.length < max && done < this.#batches.length) {
      const batch = this.#batches[done]!;
      const { delivery } = batch;
      while (rows.length < max && batch.next < batch.rows.length) {
        const { id, target } = batch.rows[batch.next++]!;
        rows.push({
          id,
          account_id: delivery.accountId,
          kind: delivery.kind,
          event_id: delivery.eventId,
          event_ms: delivery.eventMs,
          policy_id: delivery.policyId,
          policy_name: delivery.policyName,
          alert_type: delivery.alertType,
          description: delivery.description,
          mechanism_type: delivery.mechanismType,
          target,
          message_id: delivery.messageId,
          request_id: batch.requestId,
          payload: delivery.payload,
          attempts: 0,
          created_ms: batch.createdMs,
        });
      }
      if (batch.next === batch.rows.length) done++;
    }
    this.#size -= rows.length;
    this.#removeHead(done);
    return rows;
  }

  clear(): void {
    this.#batches = [];
    this.#size = 0;
  }

  #removeHead(count: number): FreshBatch[] {
    if (count === 0) return [];
    const removed = this.#batches.splice(0, count);
    for (const batch of removed) this.#size -= batch.rows.length - batch.next;
    return removed;
  }
}
