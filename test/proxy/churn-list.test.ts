import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ChurnList } from '../../src/proxy/churn-list.ts';

interface Item {
  name: string;
  listIndex: number;
  payload?: number[];
}
const item = (name: string): Item => ({ name, listIndex: -1 });
const names = (list: ChurnList<Item>) => {
  const seen: string[] = [];
  list.forEach((entry) => seen.push(entry.name));
  return seen.sort();
};

describe('ChurnList', () => {
  it('adds and removes in any order, each item knowing its place', () => {
    const list = new ChurnList<Item>();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(item) as [Item, Item, Item, Item];
    for (const entry of [a, b, c, d]) list.add(entry);
    expect(list.size).toBe(4);
    list.remove(b);
    expect(names(list)).toEqual(['a', 'c', 'd']);
    expect(b.listIndex).toBe(-1);
    list.remove(a);
    list.remove(d);
    expect(names(list)).toEqual(['c']);
    expect(c.listIndex).toBe(0);
    list.add(b);
    expect(names(list)).toEqual(['b', 'c']);
  });

  it('ignores the removal of an item that is not in it, twice or never added', () => {
    const list = new ChurnList<Item>();
    const [a, b] = [item('a'), item('b')];
    list.add(a);
    list.add(b);
    list.remove(a);
    list.remove(a);
    list.remove(item('stranger'));
    // An item of another list whose index points at a place in this one is not taken for it.
    const other = new ChurnList<Item>();
    const foreign = item('foreign');
    other.add(foreign);
    list.remove(foreign);
    expect(names(list)).toEqual(['b']);
    expect(other.size).toBe(1);
  });

  it('lets forEach remove the item it visits, and visits every item once', () => {
    const list = new ChurnList<Item>();
    const items = Array.from({ length: 10 }, (_, at) => item(String(at)));
    for (const entry of items) list.add(entry);
    const visited: string[] = [];
    list.forEach((entry) => {
      visited.push(entry.name);
      if (Number(entry.name) % 3 === 0) list.remove(entry);
    });
    expect(visited.sort()).toEqual(items.map((entry) => entry.name).sort());
    expect(names(list)).toEqual(['1', '2', '4', '5', '7', '8']);
  });

  it('keeps nothing it held alive past a young-generation collection, where a Set under the same churn keeps all', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;
    const usedBytes = () =>
      getHeapSpaceStatistics()
        .filter((space) => space.space_name === 'new_space' || space.space_name === 'old_space')
        .reduce((sum, space) => sum + space.space_used_size, 0);
    // A listener's life: ~32 connections open at once, each added when it opens and removed when it
    // closes, 3,000 of them; the list itself is long-lived (in the old generation).
    const keptBytes = (add: (entry: Item) => void, remove: (entry: Item) => void) => {
      const open: Item[] = [];
      for (let at = 0; at < 32; at++) {
        open.push(item('first'));
        add(open.at(-1)!);
      }
      gc();
      gc();
      const before = usedBytes();
      for (let round = 0; round < 3_000; round++) {
        const entry: Item = { name: 'churn', listIndex: -1, payload: new Array<number>(200).fill(round) };
        open.push(entry);
        add(entry);
        remove(open.shift()!);
      }
      for (const entry of open.splice(0)) remove(entry);
      gc({ type: 'minor' });
      gc({ type: 'minor' });
      return usedBytes() - before;
    };
    const allocated = 3_000 * 200 * 8;
    const list = new ChurnList<Item>();
    const byList = keptBytes(
      (entry) => list.add(entry),
      (entry) => list.remove(entry),
    );
    const set = new Set<Item>();
    const bySet = keptBytes(
      (entry) => set.add(entry),
      (entry) => set.delete(entry),
    );
    // (The Set shows that the measure sees what a collection keeps.)
    expect(bySet).toBeGreaterThan(allocated / 2);
    expect(byList).toBeLessThan(allocated / 20);
  });
});
