import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, unlinkSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** How long the reader rests after a read: lines written meanwhile are read together by the next one. */
export const GULP_MS = 5;
/** One read's buffer; a read that fills it is followed at once by the next (a burst is not held back). */
const READ_BYTES = 64 * 1024;

/**
 * A child's stdout, read in gulps: after each read the server stops reading for GULP_MS, so the lines
 * written meanwhile (a traced request writes one, see trace-shim.ts) wait in the pipe and the next read
 * takes them all. Read as they come, each traced request woke the server (an epoll wait and a read) and
 * made its writer wake it (bench/functions/tail-cost.ts); nothing waits on these lines sooner than that.
 *
 * The pipe is a FIFO the server opens both ends of, made in `dir` (private) and unlinked at once: a
 * socket made from an fd we own can be given `onread`, the one public way to make pause() stop reading
 * from the kernel (Node's own stdio sockets keep reading ahead into their buffer while paused). The child
 * gets the write end (blocking: a full pipe holds workerd back instead of losing lines). Without
 * `mkfifo`, it falls back to an ordinary pipe read as data comes.
 *
 * A process that exits leaves its last lines unread for up to GULP_MS: `ended` resolves only once the
 * pipe reached its end (every line delivered), which is what a killed process's requests wait for
 * (tail-traces.ts reports a request whose start line came but whose end line did not).
 */
export class GulpedOutput {
  /** The child's stdout in spawn's stdio: the FIFO's write end, or 'pipe' when there is no FIFO. */
  readonly stdio: number | 'pipe';
  /** Resolves once the output ended and every line of it was given to onLine. */
  readonly ended: Promise<void>;
  readonly #onLine: (line: string) => void;
  readonly #decoder = new StringDecoder('utf8');
  #socket: Socket | undefined;
  #partial = '';
  #resting: NodeJS.Timeout | undefined;
  #draining = false;
  #done = false;
  #resolveEnded!: () => void;

  constructor(dir: string, onLine: (line: string) => void) {
    this.#onLine = onLine;
    this.ended = new Promise((resolve) => (this.#resolveEnded = resolve));
    const fifo = openFifo(join(dir, `stdout-${++fifos}.fifo`));
    this.stdio = fifo?.write ?? 'pipe';
    if (!fifo) return;
    this.#socket = new Socket({
      fd: fifo.read,
      readable: true,
      writable: false,
      onread: { buffer: Buffer.alloc(READ_BYTES), callback: (bytes, buffer) => this.#read(bytes, buffer) },
    });
    this.#watchEnd(this.#socket);
  }

  /**
   * After spawn: closes the server's copy of the write end (the pipe ends when the child's closes), or
   * with the fallback reads the child's own stdout pipe.
   */
  attach(childStdout: Readable | null): void {
    if (typeof this.stdio === 'number') {
      closeSync(this.stdio);
      return;
    }
    if (!childStdout) return this.#end();
    childStdout.on('data', (chunk: Buffer) => this.#text(this.#decoder.write(chunk)));
    this.#watchEnd(childStdout);
  }

  /** The process exited: read what it left at once instead of after the rest. */
  drain(): void {
    this.#draining = true;
    this.#resume();
  }

  /** Returns false to pause the socket (onread's way) until the rest is over. */
  #read(bytes: number, buffer: Uint8Array): boolean {
    this.#text(this.#decoder.write(buffer.subarray(0, bytes)));
    if (bytes === READ_BYTES || this.#draining) return true;
    this.#resting ??= setTimeout(() => this.#resume(), GULP_MS);
    return false;
  }

  #resume(): void {
    clearTimeout(this.#resting);
    this.#resting = undefined;
    this.#socket?.resume();
  }

  #text(text: string): void {
    if (text.length === 0) return;
    const lines = (this.#partial + text).split('\n');
    this.#partial = lines.pop()!;
    for (const line of lines) this.#onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
  }

  #watchEnd(socket: Readable): void {
    socket.once('end', () => this.#end());
    // A read error ends the output too (the lines read so far were delivered).
    socket.once('close', () => this.#end());
  }

  #end(): void {
    if (this.#done) return;
    this.#done = true;
    clearTimeout(this.#resting);
    const last = this.#partial + this.#decoder.end();
    this.#partial = '';
    if (last.length > 0) this.#onLine(last);
    this.#resolveEnded();
  }
}

let fifos = 0;

/** A FIFO in `path`, opened for reading (non-blocking) and writing (blocking), then unlinked. */
function openFifo(path: string): { read: number; write: number } | undefined {
  try {
    execFileSync('mkfifo', ['-m', '600', path], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  try {
    // The read end first: opening the write end of a FIFO without a reader would block.
    const read = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    return { read, write: openSync(path, constants.O_WRONLY) };
  } finally {
    unlinkSync(path);
  }
}
