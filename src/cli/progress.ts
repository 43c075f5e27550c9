import { Transform } from 'node:stream';
import type { Clock } from '../shared/clock.ts';

/** Transfers smaller than this finish too fast for a progress line to help. */
export const PROGRESS_THRESHOLD = 8 * 1024 * 1024;
const REDRAW_MS = 100;
const MiB = 1024 * 1024;

/** `1:05`, `12:00:31`: an ETA as people read it. */
function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const parts = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const [h, m, sec] = parts as [number, number, number];
  return h > 0
    ? `${h}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')}`
    : `${m}:${String(sec).padStart(2, '0')}`;
}

/** A progress line on stderr: bytes, bar, percent, rate and ETA; erased at the end. */
export interface ProgressLine {
  add(bytes: number): void;
  /** Draws the final state and erases the line (the command's own message follows). */
  finish(): void;
}

/**
 * `label  [#####.....]  120.0 / 300.0 MiB  40%  8.5 MiB/s  ETA 0:21` on stderr while bytes flow. Only on a
 * terminal, never with --json, and for more than PROGRESS_THRESHOLD bytes: otherwise undefined.
 */
export function progressLine(
  label: string,
  total: number | undefined,
  time: Clock,
  json = false,
): ProgressLine | undefined {
  const stderr = process.stderr;
  if (json || !stderr.isTTY || total === undefined || total <= PROGRESS_THRESHOLD) return undefined;
  const started = time.monotonic();
  let done = 0;
  let drawn = 0;
  const draw = () => {
    drawn = time.monotonic();
    const seconds = Math.max((drawn - started) / 1000, 0.001);
    const rate = done / seconds;
    const fraction = Math.min(done / total, 1);
    const bar = '#'.repeat(Math.round(fraction * 20)).padEnd(20, '.');
    const eta = rate > 0 ? clock((total - done) / rate) : '-';
    const line = `${label}  [${bar}]  ${(done / MiB).toFixed(1)} / ${(total / MiB).toFixed(1)} MiB  ${Math.floor(fraction * 100)}%  ${(rate / MiB).toFixed(1)} MiB/s  ETA ${eta}`;
    stderr.write(`\r\x1b[2K${line}`);
  };
  return {
    add(bytes) {
      done += bytes;
      if (time.monotonic() - drawn >= REDRAW_MS) draw();
    },
    finish() {
      draw();
      stderr.write('\r\x1b[2K');
    },
  };
}

/** The same line as a pass-through stream (downloads); undefined when no line is shown. */
export function progressMeter(
  label: string,
  total: number | undefined,
  time: Clock,
  json = false,
): Transform | undefined {
  const line = progressLine(label, total, time, json);
  if (!line) return undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      line.add(chunk.length);
      callback(null, chunk);
    },
    flush(callback) {
      line.finish();
      callback();
    },
    destroy(error, callback) {
      process.stderr.write('\r\x1b[2K');
      callback(error);
    },
  });
}
