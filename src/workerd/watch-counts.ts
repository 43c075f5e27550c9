/**
 * How many watchers (tail sessions, log followers) each script has here, by `<account>/<script>` key: the tail
 * traces and the log hub tell the cluster relay (workers/tail/cluster-relay.ts) when a script gains its first
 * watcher or loses its last.
 */
export class WatchCounts {
  readonly #counts = new Map<string, number>();

  /**
   * Counts a watcher of `key` and returns its unsubscribe function (which may be called more than once; it
   * calls `detach` once). `edge(watched)` runs when the key gains its first watcher or loses its last.
   */
  watch(key: string, detach: () => void, edge: (watched: boolean) => void): () => void {
    const count = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, count);
    if (count === 1) edge(true);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      detach();
      const left = (this.#counts.get(key) ?? 1) - 1;
      if (left > 0) return void this.#counts.set(key, left);
      this.#counts.delete(key);
      edge(false);
    };
  }

  has(key: string): boolean {
    return this.#counts.has(key);
  }

  keys(): IterableIterator<string> {
    return this.#counts.keys();
  }
}
