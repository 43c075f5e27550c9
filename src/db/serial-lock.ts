/**
 * A FIFO lock for async work. `run` calls `fn` at once, in the same tick, when the lock is free, so an
 * uncontended write costs no extra turn of the event loop.
 */
export class SerialLock {
  #held = false;
  readonly #waiting: Array<() => void> = [];

  get held(): boolean {
    return this.#held;
  }

  run<T>(fn: () => T | Promise<T>): Promise<T> {
    if (!this.#held) return this.#enter(fn);
    return new Promise<void>((resolve) => this.#waiting.push(resolve)).then(() => this.#enter(fn));
  }

  #enter<T>(fn: () => T | Promise<T>): Promise<T> {
    this.#held = true;
    let result: T | Promise<T>;
    try {
      result = fn();
    } catch (error) {
      this.#release();
      return Promise.reject(error as Error);
    }
    if (!(result instanceof Promise)) {
      this.#release();
      return Promise.resolve(result);
    }
    return result.finally(() => this.#release());
  }

  #release(): void {
    const next = this.#waiting.shift();
    // Handed over without freeing, so nobody can slip in between two queued holders.
    if (next) next();
    else this.#held = false;
  }
}
