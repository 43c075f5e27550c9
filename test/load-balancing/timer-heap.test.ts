import { describe, expect, it } from 'vitest';
import { TimerHeap } from '../../src/load-balancing/health/timer-heap.ts';

describe('TimerHeap', () => {
  it('pops entries in due order, whatever the push order', () => {
    const heap = new TimerHeap<{ due: number }>();
    const dues = Array.from({ length: 2000 }, (_, i) => (i * 7919) % 2003);
    for (const due of dues) heap.push({ due });
    const popped: number[] = [];
    for (let item = heap.pop(); item; item = heap.pop()) popped.push(item.due);
    expect(popped).toEqual([...dues].sort((a, b) => a - b));
    expect(heap.size).toBe(0);
  });

  it('interleaves pushes and pops (the scheduler pattern)', () => {
    const heap = new TimerHeap<{ due: number }>();
    for (const due of [50, 10, 30]) heap.push({ due });
    expect(heap.pop()?.due).toBe(10);
    heap.push({ due: 20 });
    heap.push({ due: 60 });
    expect(heap.peek()?.due).toBe(20);
    expect([heap.pop(), heap.pop(), heap.pop(), heap.pop()].map((i) => i?.due)).toEqual([20, 30, 50, 60]);
    expect(heap.pop()).toBeUndefined();
  });
});
