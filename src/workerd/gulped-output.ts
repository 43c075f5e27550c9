import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, unlinkSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { MAX_STDOUT_LINE } from './log-limits.ts';

/** How long the reader rests after a read: lines written meanwhile are read together by the next one. */
export const GULP_MS = 5;
/** One read's buffer; a read that fills it is followed by the next in the next turn of the event loop (a burst is not held back). */
const READ_BYTES = 64 * 1024;

/**
 * A child's stdout, read in gulps: after each read the server stops reading for GULP_MS, so the lines
 * written meanwhile (a traced request writes one, see isolate/trace.ts) wait in the pipe and the next read
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
  /** The pieces of the line being read (kept apart: joining them at each read made long lines quadratic). */
  #partial: string[] = [];
  #partialLength = 0;
  /** Inside a line longer than MAX_STDOUT_LINE: the rest of it is skipped. */
  #skipping = false;
  #resting: NodeJS.Timeout | undefined;
  #yielding: NodeJS.Immediate | undefined;
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
    if (this.#draining) return true;
    if (bytes === READ_BYTES) {
      // More is waiting: read it next, but after whatever else is due (libuv would read on, up to 32
      // buffers in one go, and a tenant flooding its console would hold the event loop that long).
      this.#yielding ??= setImmediate(() => {
        this.#yielding = undefined;
        this.#socket?.resume();
      });
      return false;
    }
    this.#resting ??= setTimeout(() => this.#resume(), GULP_MS);
    return false;
  }

  #resume(): void {
    clearTimeout(this.#resting);
    this.#resting = undefined;
    this.#socket?.resume();
  }

  #text(text: string): void {
    let from = 0;
    for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', from)) {
      const piece = text.slice(from, newline);
      from = newline + 1;
      if (this.#skipping) {
        this.#skipping = false;
        continue;
      }
      this.#line(piece);
    }
    const rest = text.slice(from);
    if (rest.length === 0 || this.#skipping) return;
    if (this.#partialLength + rest.length > MAX_STDOUT_LINE) {
      // Never held whole: what came of it is dropped, and the server's log says so.
      this.#skipping = true;
      this.#partial = [];
      this.#partialLength = 0;
      this.#onLine(`[ledge] a stdout line longer than ${MAX_STDOUT_LINE} characters was dropped`);
      return;
    }
    this.#partial.push(rest);
    this.#partialLength += rest.length;
  }

  /** A whole line: the pieces read before it, and `last`. */
  #line(last: string): void {
    const line = this.#partial.length === 0 ? last : this.#partial.join('') + last;
    this.#partial = [];
    this.#partialLength = 0;
    this.#onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
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
    clearImmediate(this.#yielding);
    const last = this.#decoder.end();
    if (!this.#skipping && (last.length > 0 || this.#partial.length > 0)) this.#line(last);
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
