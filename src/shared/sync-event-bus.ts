/**
 * A producer-to-consumer contract for events that must commit or roll back with the change that raised
 * them: the producer publishes INSIDE its database transaction, and listeners run synchronously there.
 * A listener that writes (an outbox row) therefore shares the transaction; one that throws rolls it back.
 */
export class SyncEventBus<T> {
  readonly #listeners: ((event: T) => void)[] = [];

  subscribe(listener: (event: T) => void): () => void {
    this.#listeners.push(listener);
    return () => {
      const index = this.#listeners.indexOf(listener);
      if (index >= 0) this.#listeners.splice(index, 1);
    };
  }

  /** Producers call this inside their transaction, after writing the change; errors propagate. */
  publish(event: T): void {
    for (const listener of this.#listeners) listener(event);
  }
}
