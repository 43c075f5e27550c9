import type { NewDelivery, OutboxRow } from './outbox.ts';

/** The rows one append() wrote: ids `firstId`.. in target order, all sharing everything but the target. */
export interface FreshBatch {
  firstId: number;
  lastId: number;
  delivery: Omit<NewDelivery, 'target'>;
  targets: readonly string[];
  createdMs: number;
  /** The API request that wrote them, if any. */
  requestId: string | null;
  /** Index of the next target not yet handed out. */
  next: number;
}

/**
 * Outbox rows written by this process, waiting to be handed to its dispatcher in memory (so that it
 * needs no claim UPDATE and no read-back per row). Only a queue: the Outbox decides what enters it and
 * checks with the database that a batch's transaction committed before any row of it is handed out.
 */
export class FreshRows {
  #batches: FreshBatch[] = [];
  /** Batches before this index are known to be committed. */
  #confirmed = 0;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(batch: FreshBatch): void {
    // Committed ids are never reused (AUTOINCREMENT), so a queued batch whose ids were just allocated
    // again belongs to a transaction that rolled back: its rows do not exist.
    while (this.#batches.length > this.#confirmed && this.#batches.at(-1)!.lastId >= batch.firstId) {
      this.#drop(this.#batches.length - 1);
    }
    this.#batches.push(batch);
    this.#size += batch.targets.length - batch.next;
  }

  /** The batches not yet checked against the database. */
  unconfirmed(): readonly FreshBatch[] {
    return this.#batches.slice(this.#confirmed);
  }

  /** Marks every queued batch as committed, except those listed (rolled back), which are dropped. */
  confirm(missing: ReadonlySet<FreshBatch> = new Set()): void {
    if (missing.size > 0) this.#batches = this.#batches.filter((batch) => !missing.has(batch));
    this.#confirmed = this.#batches.length;
    this.#size = this.#batches.reduce((sum, batch) => sum + batch.targets.length - batch.next, 0);
  }

  /** Removes and returns the confirmed batches written before `createdBeforeMs` (their rows go back to the table). */
  takeOlderThan(createdBeforeMs: number): FreshBatch[] {
    let count = 0;
    while (count < this.#confirmed && this.#batches[count]!.createdMs < createdBeforeMs) count++;
    return this.#removeHead(count);
  }

  /** Up to `max` confirmed rows, oldest first. */
  take(max: number): OutboxRow[] {
    const rows: OutboxRow[] = [];
    let done = 0;
    while (rows.length < max && done < this.#confirmed) {
      const batch = this.#batches[done]!;
      const { delivery } = batch;
      while (rows.length < max && batch.next < batch.targets.length) {
        const index = batch.next++;
        rows.push({
          id: batch.firstId + index,
          account_id: delivery.accountId,
          kind: delivery.kind,
          event_id: delivery.eventId,
          event_ms: delivery.eventMs,
          policy_id: delivery.policyId,
          policy_name: delivery.policyName,
          alert_type: delivery.alertType,
          description: delivery.description,
          mechanism_type: delivery.mechanismType,
          target: batch.targets[index]!,
          message_id: delivery.messageId,
          request_id: batch.requestId,
          payload: delivery.payload,
          attempts: 0,
          created_ms: batch.createdMs,
        });
      }
      if (batch.next === batch.targets.length) done++;
    }
    this.#size -= rows.length;
    this.#removeHead(done);
    return rows;
  }

  clear(): void {
    this.#batches = [];
    this.#confirmed = 0;
    this.#size = 0;
  }

  #removeHead(count: number): FreshBatch[] {
    if (count === 0) return [];
    const removed = this.#batches.splice(0, count);
    this.#confirmed -= count;
    for (const batch of removed) this.#size -= batch.targets.length - batch.next;
    return removed;
  }

  #drop(index: number): void {
    const [batch] = this.#batches.splice(index, 1);
    if (batch) this.#size -= batch.targets.length - batch.next;
  }
}
