import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Keeps streaming memory flat. Every chunk of a streamed body is a fresh ArrayBuffer outside the V8
 * heap; V8 only frees dead ones at a collection, and with little heap allocation it lets ~50-60 MiB of
 * them pile up before collecting (measured: bench/storage). A young-generation collection every
 * NUDGE_BYTES streamed frees them early, for about a millisecond each. If the runtime refuses to
 * expose the collector, streaming still works, only with the higher plateau.
 */
export const NUDGE_BYTES = 16 * 1024 * 1024;

type Collector = (options?: { type?: 'minor' | 'major' }) => void;
let collector: Collector | null | undefined;
let streamed = 0;

export function noteStreamedBytes(bytes: number): void {
  streamed += bytes;
  if (streamed < NUDGE_BYTES) return;
  streamed = 0;
  loadCollector()?.({ type: 'minor' });
}

function loadCollector(): Collector | null {
  if (collector !== undefined) return collector;
  try {
    setFlagsFromString('--expose-gc');
    collector = runInNewContext('gc') as Collector;
  } catch {
    collector = null;
  }
  return collector;
}
