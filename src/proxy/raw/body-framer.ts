/**
 * Finds where a message body ends without changing its bytes: bodies are relayed as they came (a chunked
 * body stays chunked, extensions and trailers included), so the proxy only needs to know how many of the
 * bytes it reads belong to the current message. Content-Length bodies are counted; chunked ones are
 * scanned (sizes, extensions, CRLFs, trailers) with a small state machine that refuses malformed framing.
 */
export class FramingError extends Error {}

const SIZE = 0; // hex digits of a chunk size
const EXTENSION = 1; // after the size: ";ext=..." up to CR
const SIZE_LF = 2; // LF ending the size line
const DATA = 3; // chunk data (remaining counts it)
const DATA_CR = 4; // CR after chunk data
const DATA_LF = 5; // LF after chunk data
const TRAILER_START = 6; // start of a trailer line, or the final CRLF
const TRAILER_LINE = 7; // inside a trailer line, up to CR
const TRAILER_LF = 8; // LF ending a trailer line
const FINAL_LF = 9; // LF of the final CRLF
const DONE = 10;

/** A chunk size has at most this many hex digits (2^48 bytes), so the arithmetic stays exact. */
const MAX_SIZE_DIGITS = 12;
/** Extensions and trailers are relayed, not stored, but a line that never ends is refused. */
const MAX_LINE_BYTES = 16 * 1024;

export class BodyFramer {
  /** Bytes left of a Content-Length body or of the current chunk. */
  #remaining = 0;
  #chunked = false;
  #state = DONE;
  #digits = 0;
  #lineBytes = 0;
  #untilClose = false;

  /** A body of `length` bytes. */
  length(length: number): this {
    this.#chunked = false;
    this.#untilClose = false;
    this.#remaining = length;
    this.#state = length > 0 ? DATA : DONE;
    return this;
  }

  chunked(): this {
    this.#chunked = true;
    this.#untilClose = false;
    this.#remaining = 0;
    this.#state = SIZE;
    this.#digits = 0;
    this.#lineBytes = 0;
    return this;
  }

  /** A response body that ends when the origin closes the connection. */
  untilClose(): this {
    this.#chunked = false;
    this.#untilClose = true;
    this.#state = DATA;
    return this;
  }

  get done(): boolean {
    return this.#state === DONE;
  }

  /**
   * How many bytes of `buffer` from `start` belong to the body (the rest belongs to whatever follows).
   * Throws FramingError on malformed chunked framing.
   */
  consume(buffer: Buffer, start: number): number {
    const available = buffer.length - start;
    if (this.#untilClose) return available;
    if (!this.#chunked) {
      const taken = Math.min(available, this.#remaining);
      this.#remaining -= taken;
      if (this.#remaining === 0) this.#state = DONE;
      return taken;
    }
    let at = start;
    const end = buffer.length;
    while (at < end && this.#state !== DONE) {
      if (this.#state === DATA) {
        const taken = Math.min(end - at, this.#remaining);
        at += taken;
        this.#remaining -= taken;
        if (this.#remaining === 0) this.#state = DATA_CR;
        continue;
      }
      this.#step(buffer[at]!);
      at++;
    }
    return at - start;
  }

  #step(byte: number): void {
    switch (this.#state) {
      case SIZE: {
        const digit = hexValue(byte);
        if (digit >= 0) {
          if (++this.#digits > MAX_SIZE_DIGITS) throw new FramingError('chunk size too large');
          this.#remaining = this.#remaining * 16 + digit;
          return;
        }
        if (this.#digits === 0) throw new FramingError('missing chunk size');
        if (byte === 0x0d) this.#state = SIZE_LF;
        else if (byte === 0x3b || byte === 0x20 || byte === 0x09) {
          this.#state = EXTENSION;
          this.#lineBytes = 0;
        } else throw new FramingError('invalid chunk size');
        return;
      }
      case EXTENSION:
        if (byte === 0x0d) this.#state = SIZE_LF;
        else if (byte === 0x0a || byte < 0x09 || (byte > 0x0d && byte < 0x20) || byte === 0x7f) {
          throw new FramingError('invalid chunk extension');
        } else if (++this.#lineBytes > MAX_LINE_BYTES) throw new FramingError('chunk extension too long');
        return;
      case SIZE_LF:
        if (byte !== 0x0a) throw new FramingError('chunk size line without LF');
        this.#digits = 0;
        if (this.#remaining === 0) {
          this.#state = TRAILER_START;
        } else {
          this.#state = DATA;
        }
        return;
      case DATA_CR:
        if (byte !== 0x0d) throw new FramingError('chunk data without CRLF');
        this.#state = DATA_LF;
        return;
      case DATA_LF:
        if (byte !== 0x0a) throw new FramingError('chunk data without CRLF');
        this.#state = SIZE;
        this.#remaining = 0;
        return;
      case TRAILER_START:
        if (byte === 0x0d) this.#state = FINAL_LF;
        else if (byte === 0x0a) throw new FramingError('bare LF in trailers');
        else {
          this.#state = TRAILER_LINE;
          this.#lineBytes = 1;
        }
        return;
      case TRAILER_LINE:
        if (byte === 0x0d) this.#state = TRAILER_LF;
        else if (byte === 0x0a || byte === 0) throw new FramingError('invalid trailer line');
        else if (++this.#lineBytes > MAX_LINE_BYTES) throw new FramingError('trailer line too long');
        return;
      case TRAILER_LF:
        if (byte !== 0x0a) throw new FramingError('trailer line without LF');
        this.#state = TRAILER_START;
        return;
      case FINAL_LF:
        if (byte !== 0x0a) throw new FramingError('chunked body without final CRLF');
        this.#state = DONE;
        return;
    }
  }
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  return -1;
}
