/**
 * A producer-to-consumer contract for events that must commit or roll back with the change that raised
 * them: the producer publishes INSIDE its database transaction and hands its scope (the transaction
 * handle) to the listeners, which write with it (an outbox row) and so share the transaction; a listener
 * that throws rolls it back. Generic over the scope so that shared/ needs no database types.
 */
export class TransactionalEventBus<T, Scope> {
  readonly #listeners: ((event: T, scope: Scope) => Promise<void>)[] = [];

  subscribe(listener: (event: T, scope: Scope) => Promise<void>): () => void {
    this.#listeners.push(listener);
    return () => {
      const index = this.#listeners.indexOf(listener);
      if (index >= 0) this.#listeners.splice(index, 1);
    };
  }

  /** Producers call this inside their transaction, after writing the change; errors propagate. */
  async publish(event: T, scope: Scope): Promise<void> {
    for (const listener of this.#listeners) await listener(event, scope);
  }
}
