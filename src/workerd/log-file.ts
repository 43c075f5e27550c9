import { appendFile, mkdir, open, rename, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LOG_FILE_BYTES, LOG_PENDING_BYTES } from './log-limits.ts';
import type { Clock } from '../shared/clock.ts';
import { isoNow } from '../shared/time.ts';

/** One read of a history: large enough to be cheap per byte, small enough that no chunk holds the event loop. */
const CHUNK_BYTES = 256 * 1024;
/** One read while looking backwards for where the last lines start (most reads want few lines). */
const SCAN_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/**
 * One script's kept console output: JSON lines in `<script>.log`, rotated to `<script>.log.1` past
 * LOG_FILE_BYTES (one rotated file kept). Nothing here runs a synchronous file call on the event loop:
 * lines are appended in batches, one write per batch (all lines that came while the last write ran), and
 * a history is read in chunks, from the end, as the reader takes them.
 */
export class ScriptLogFile {
  readonly #path: string;
  readonly #onError: (error: unknown) => void;
  readonly #clock: Clock;
  #pending: string[] = [];
  #pendingBytes = 0;
  #dropped = 0;
  /** The current file's size once known (stat at the first write). */
  #size: number | undefined;
  /**
   * How many lines the current and the rotated file hold, once known (a file this process started, or one a
   * history read went through to its start): a read that wants at least that many needs no backward scan.
   */
  #lines: number | undefined;
  #olderLines: number | undefined;
  #rotations = 0;
  #writing: Promise<void> | undefined;

  constructor(path: string, onError: (error: unknown) => void, clock: Clock) {
    this.#path = path;
    this.#onError = onError;
    this.#clock = clock;
  }

  /** Queues one line (ending in a newline); dropped and counted when LOG_PENDING_BYTES already wait. */
  append(line: string): void {
    if (this.#pendingBytes + line.length > LOG_PENDING_BYTES) {
      this.#dropped++;
      return;
    }
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    this.#writing ??= this.#drain();
  }

  /** Resolves once every line queued so far is in the file. */
  flush(): Promise<void> {
    return this.#writing ?? Promise.resolve();
  }

  /**
   * The last `count` lines, oldest first, as raw chunks of the files (a chunk may end inside a line; the
   * lines are the JSON lines they were written as). Reads only as far back as those lines start.
   */
  async *tail(count: number): AsyncGenerator<Uint8Array> {
    if (count <= 0) return;
    await this.flush();
    // Opened before reading: a rotation meanwhile renames the files, these handles keep reading the same ones.
    const rotations = this.#rotations;
    const current = await openIfExists(this.#path);
    const older = await openIfExists(`${this.#path}.1`);
    try {
      const parts: Array<{ handle: FileHandle; start: number; end: number }> = [];
      let wanted = count;
      for (const [handle, isCurrent] of [
        [current, true],
        [older, false],
      ] as const) {
        if (!handle || wanted <= 0) continue;
        const end = (await handle.stat()).size;
        const same = rotations === this.#rotations;
        const known = !same ? undefined : isCurrent ? (end === this.#size ? this.#lines : undefined) : this.#olderLines;
        const { start, found } =
          known !== undefined && wanted >= known
            ? { start: 0, found: known }
            : await startOfLastLines(handle, end, wanted);
        // Read to its start: now its line count is known too (unless it changed meanwhile).
        if (start === 0 && known === undefined && rotations === this.#rotations) {
          if (!isCurrent) this.#olderLines = found;
          else if (end === this.#size) this.#lines = found;
        }
        parts.unshift({ handle, start, end });
        wanted -= found;
      }
      for (const { handle, start, end } of parts) {
        for (let at = start; at < end;) {
          const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, end - at));
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, at);
          if (bytesRead === 0) break;
          at += bytesRead;
          yield buffer.subarray(0, bytesRead);
        }
      }
    } finally {
      await current?.close();
      await older?.close();
    }
  }

  async #drain(): Promise<void> {
    try {
      // The lines of this turn (one read of workerd's stdout brings many) go in the first write together.
      await new Promise((resolve) => setImmediate(resolve));
      while (this.#pending.length > 0 || this.#dropped > 0) {
        let batch = this.#pending.join('');
        let lines = this.#pending.length;
        if (this.#dropped > 0) {
          batch += droppedNote(this.#dropped, this.#clock);
          lines++;
        }
        this.#pending = [];
        this.#pendingBytes = 0;
        this.#dropped = 0;
        try {
          await this.#write(batch, lines);
        } catch (error) {
          this.#size = undefined;
          this.#lines = undefined;
          this.#onError(error);
        }
      }
    } finally {
      this.#writing = undefined;
    }
  }

  async #write(batch: string, lines: number): Promise<void> {
    if (this.#size === undefined) {
      await mkdir(dirname(this.#path), { recursive: true, mode: 0o700 });
      const { size, endsLine } = await sizeOf(this.#path);
      this.#size = size;
      this.#lines = size === 0 ? 0 : undefined;
      // A server killed in the middle of a write left half a line: the next line starts on its own.
      if (!endsLine) batch = `\n${batch}`;
    }
    const bytes = Buffer.byteLength(batch);
    if (this.#size > 0 && this.#size + bytes > LOG_FILE_BYTES) {
      await rename(this.#path, `${this.#path}.1`);
      this.#rotations++;
      this.#olderLines = this.#lines;
      this.#size = 0;
      this.#lines = 0;
    }
    await appendFile(this.#path, batch, { mode: 0o600 });
    this.#size += bytes;
    if (this.#lines !== undefined) this.#lines += lines;
  }
}

function droppedNote(count: number, clock: Clock): string {
  const message = `[ledge] ${count} console line(s) of this script were dropped: they came faster than the disk took them`;
  return `${JSON.stringify({ time: isoNow(clock), level: 'warn', message: [message] })}\n`;
}

async function openIfExists(path: string): Promise<FileHandle | undefined> {
  try {
    return await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function sizeOf(path: string): Promise<{ size: number; endsLine: boolean }> {
  const handle = await openIfExists(path);
  if (!handle) return { size: 0, endsLine: true };
  try {
    const { size } = await handle.stat();
    if (size === 0) return { size, endsLine: true };
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    return { size, endsLine: last[0] === NEWLINE };
  } finally {
    await handle.close();
  }
}

/**
 * Where the last `wanted` lines of the first `end` bytes start, read backwards in chunks; `found` is how
 * many lines that is (fewer than wanted when the file has fewer).
 */
async function startOfLastLines(
  handle: FileHandle,
  end: number,
  wanted: number,
): Promise<{ start: number; found: number }> {
  const buffer = Buffer.allocUnsafe(SCAN_BYTES);
  let found = 0;
  let first = true;
  for (let cursor = end; cursor > 0;) {
    const from = Math.max(0, cursor - SCAN_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, cursor - from, from);
    let i = bytesRead - 1;
    // The newline that ends the last line does not start another one.
    if (first && buffer[i] === NEWLINE) i--;
    first = false;
    while (i >= 0) {
      const at = buffer.lastIndexOf(NEWLINE, i);
      if (at < 0) break;
      if (++found === wanted) return { start: from + at + 1, found };
      i = at - 1;
    }
    cursor = from;
  }
  // The first line of the file has no newline before it.
  return { start: 0, found: end > 0 ? found + 1 : 0 };
}
