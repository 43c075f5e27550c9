/**
 * How fast one account's history reads (`GET .../tail?history=`) are streamed, all its reads together: a whole
 * kept history of a script (at most 16 MiB, src/workerd/log-limits.ts) in about a second. Streaming is cheap per
 * chunk but not free, and a tenant reading its history back in a loop would otherwise take as much of the
 * server's event loop as its clients can read, at the expense of every other tenant's API calls.
 */
export const HISTORY_BYTES_PER_SECOND = 16 * 1024 * 1024;

/** A pacing per key (the account): `take` waits until the key's earlier bytes have had their time. */
export class BytePace {
  readonly #bytesPerSecond: number;
  readonly #due = new Map<string, number>();

  constructor(bytesPerSecond = HISTORY_BYTES_PER_SECOND) {
    this.#bytesPerSecond = bytesPerSecond;
  }

  async take(key: string, bytes: number): Promise<void> {
    const now = performance.now();
    const at = Math.max(now, this.#due.get(key) ?? 0);
    this.#due.set(key, at + (bytes * 1000) / this.#bytesPerSecond);
    // Keys whose time has passed are forgotten now and then: the map holds only accounts reading now.
    if (this.#due.size > 64) for (const [k, due] of this.#due) if (due < now) this.#due.delete(k);
    if (at > now) await new Promise((resolve) => setTimeout(resolve, at - now));
  }
}
