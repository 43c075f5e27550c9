import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A collection after this many bytes moved. */
const EVERY_BYTES = 16 * 1024 * 1024;

/**
 * Keeps a long transfer's memory flat. Each chunk read from a socket is a fresh buffer outside the JS heap;
 * V8 frees them only when it collects, which it does late for a program that makes little other garbage
 * (a 300 MiB download reached ~60 MiB above the CLI's own size). A collection every EVERY_BYTES (a few ms
 * on the CLI's small heap) frees them in step with the transfer. Falls back to doing nothing if V8 will
 * not expose `gc`.
 */
export function memoryPacer(): (bytes: number) => void {
  let collect: (() => void) | undefined;
  try {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  } catch {
    collect = undefined;
  }
  let moved = 0;
  return (bytes) => {
    moved += bytes;
    if (moved < EVERY_BYTES || !collect) return;
    moved = 0;
    collect();
  };
}
