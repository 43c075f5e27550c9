import { Transform } from 'node:stream';

/** Transfers smaller than this finish too fast for a progress line to help. */
export const PROGRESS_THRESHOLD = 8 * 1024 * 1024;
const REDRAW_MS = 100;
const MiB = 1024 * 1024;

/**
 * A pass-through stream that draws `label  12.0 / 100.0 MiB  12%  8.5 MiB/s` on stderr while bytes flow,
 * and erases it at the end, so the success line stands alone. Only on a terminal and for more than
 * PROGRESS_THRESHOLD bytes: otherwise undefined (nothing to insert in the pipeline).
 */
export function progressMeter(label: string, total: number | undefined): Transform | undefined {
  const stderr = process.stderr;
  if (!stderr.isTTY || total === undefined || total <= PROGRESS_THRESHOLD) return undefined;
  const started = Date.now();
  let done = 0;
  let drawn = 0;
  const draw = () => {
    drawn = Date.now();
    const seconds = Math.max((drawn - started) / 1000, 0.001);
    const percent = Math.floor((done / total) * 100);
    const line = `${label}  ${(done / MiB).toFixed(1)} / ${(total / MiB).toFixed(1)} MiB  ${percent}%  ${(done / MiB / seconds).toFixed(1)} MiB/s`;
    stderr.write(`\r\x1b[2K${line}`);
  };
  const erase = () => stderr.write('\r\x1b[2K');
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      done += chunk.length;
      if (Date.now() - drawn >= REDRAW_MS) draw();
      callback(null, chunk);
    },
    flush(callback) {
      draw();
      erase();
      callback();
    },
    destroy(error, callback) {
      erase();
      callback(error);
    },
  });
}
