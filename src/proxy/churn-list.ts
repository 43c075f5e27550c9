/** What a ChurnList holds: each item keeps its own place in the list (-1 when not in one). */
export interface Listed {
  listIndex: number;
}

/**
 * The set of things that come and go by the thousand per second on a listener (connections, handshakes):
 * an array in which a removed item's place is taken by the last one. Not a Set or Map: a long-lived V8
 * hash table that sees an add and a delete per connection keeps the objects it held alive through every
 * young-generation collection until the next full one (measured on a node:net server closing 10-20 k
 * connections per second: a quarter of what was allocated survived each scavenge, whose pauses grew to
 * 10-35 ms; with this list, nothing of a closed connection survives and scavenges take ~1 ms).
 */
export class ChurnList<T extends Listed> {
  readonly #items: T[] = [];

  get size(): number {
    return this.#items.length;
  }

  add(item: T): void {
    item.listIndex = this.#items.length;
    this.#items.push(item);
  }

  /** Takes `item` out of the list; nothing when it is not in it. */
  remove(item: T): void {
    const at = item.listIndex;
    if (at < 0 || this.#items[at] !== item) return;
    const last = this.#items.pop()!;
    if (last !== item) {
      this.#items[at] = last;
      last.listIndex = at;
    }
    item.listIndex = -1;
  }

  /** Visits every item, the last added first; `visit` may remove the item it is given (and no other). */
  forEach(visit: (item: T) => void): void {
    const items = this.#items;
    for (let at = items.length - 1; at >= 0; at--) {
      const item = items[at];
      if (item) visit(item);
    }
  }
}
