/** A binary min-heap ordered by `due` (ms). Removal is lazy: callers skip entries they cancelled. */
export class TimerHeap<T extends { due: number }> {
  readonly #items: T[] = [];

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    const items = this.#items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]!.due <= item.due) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = item;
  }

  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child = right < items.length && items[right]!.due < items[left]!.due ? right : left;
      if (items[child]!.due >= last.due) break;
      items[i] = items[child]!;
      i = child;
    }
    items[i] = last;
    return top;
  }

  clear(): void {
    this.#items.length = 0;
  }
}
