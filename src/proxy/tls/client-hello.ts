/** What TLS termination reads of a client's first flight before the handshake: where it is going. */
export interface ClientHello {
  /** The SNI host name, lowercase (undefined: the client sent none, as for an IP address). */
  serverName: string | undefined;
  /** The ALPN protocols the client offers, in its order. */
  protocols: string[];
}

/** A ClientHello larger than this (16 KiB records, a few of them) is refused. */
export const MAX_CLIENT_HELLO_BYTES = 64 * 1024;

const HANDSHAKE_RECORD = 22;
const CLIENT_HELLO = 1;
const SERVER_NAME_EXTENSION = 0;
const ALPN_EXTENSION = 16;

/**
 * Reads the ClientHello at the start of `bytes` (what a client sent so far): `undefined` while more bytes
 * are needed, an Error for something that is not a TLS ClientHello. The connection is then handed to
 * node:tls with these bytes unread: this only decides which certificate, protocol floor and ALPN list the
 * handshake gets, before it starts (an SNI callback comes too late for the ALPN of a TLS-ALPN-01 check and
 * for the protocol floor of the zone).
 */
export function readClientHello(bytes: Buffer): ClientHello | Error | undefined {
  const handshake = handshakeBytes(bytes);
  if (handshake === undefined || handshake instanceof Error) return handshake;
  if (handshake.length < 4) return undefined;
  if (handshake[0] !== CLIENT_HELLO) return new Error('not a TLS ClientHello');
  const length = handshake.readUIntBE(1, 3);
  if (length > MAX_CLIENT_HELLO_BYTES) return new Error('TLS ClientHello too large');
  if (handshake.length < 4 + length) return undefined;
  return parseHello(handshake.subarray(4, 4 + length));
}

/** The handshake bytes of the TLS records at the start of `bytes` (a ClientHello may span records). */
function handshakeBytes(bytes: Buffer): Buffer | Error | undefined {
  // Most ClientHellos fit one record: its body is used in place, not copied.
  if (bytes.length >= 5 && bytes[0] === HANDSHAKE_RECORD) {
    const length = bytes.readUInt16BE(3);
    if (bytes.length >= 5 + length && length >= 4 && 4 + bytes.readUIntBE(6, 3) <= length) {
      return bytes.subarray(5, 5 + length);
    }
  }
  const parts: Buffer[] = [];
  let offset = 0;
  while (offset + 5 <= bytes.length) {
    if (bytes[offset] !== HANDSHAKE_RECORD) return new Error('not a TLS handshake');
    const length = bytes.readUInt16BE(offset + 3);
    if (offset + 5 + length > bytes.length) break;
    parts.push(bytes.subarray(offset + 5, offset + 5 + length));
    offset += 5 + length;
  }
  if (offset === 0 && bytes.length > 0 && bytes[0] !== HANDSHAKE_RECORD) return new Error('not a TLS handshake');
  return parts.length === 0 ? undefined : Buffer.concat(parts);
}

function parseHello(hello: Buffer): ClientHello | Error {
  const reader = new Reader(hello);
  reader.skip(2 + 32); // legacy_version, random
  reader.skip(reader.u8()); // legacy_session_id
  reader.skip(reader.u16()); // cipher_suites
  reader.skip(reader.u8()); // legacy_compression_methods
  const result: ClientHello = { serverName: undefined, protocols: [] };
  if (reader.failed) return new Error('malformed TLS ClientHello');
  if (reader.remaining === 0) return result;
  const extensions = reader.sub(reader.u16());
  while (!extensions.failed && extensions.remaining > 0) {
    const type = extensions.u16();
    const body = extensions.sub(extensions.u16());
    if (type === SERVER_NAME_EXTENSION) {
      const list = body.sub(body.u16());
      while (!list.failed && list.remaining > 0) {
        const nameType = list.u8();
        const name = list.bytes(list.u16());
        if (nameType === 0 && result.serverName === undefined)
          result.serverName = name.toString('latin1').toLowerCase();
      }
      if (list.failed) return new Error('malformed TLS server_name extension');
    } else if (type === ALPN_EXTENSION) {
      const list = body.sub(body.u16());
      while (!list.failed && list.remaining > 0) result.protocols.push(list.bytes(list.u8()).toString('latin1'));
      if (list.failed) return new Error('malformed TLS ALPN extension');
    }
    if (body.failed) return new Error('malformed TLS extension');
  }
  return extensions.failed || reader.failed ? new Error('malformed TLS ClientHello') : result;
}

/**
 * Big-endian reads that record a read past the end instead of throwing. Numbers are read in place; only
 * `bytes` makes a view (a handshake reads a dozen extensions, each of them once).
 */
class Reader {
  failed = false;
  #offset: number;
  readonly #end: number;
  readonly #buffer: Buffer;

  constructor(buffer: Buffer, offset = 0, end = buffer.length) {
    this.#buffer = buffer;
    this.#offset = offset;
    this.#end = end;
  }

  get remaining(): number {
    return this.#end - this.#offset;
  }

  u8(): number {
    return this.#take(1) ? this.#buffer[this.#offset - 1]! : 0;
  }

  u16(): number {
    return this.#take(2) ? this.#buffer.readUInt16BE(this.#offset - 2) : 0;
  }

  bytes(length: number): Buffer {
    return this.#take(length) ? this.#buffer.subarray(this.#offset - length, this.#offset) : Buffer.alloc(0);
  }

  /** A reader of the next `length` bytes (over the same buffer, no view made). */
  sub(length: number): Reader {
    if (!this.#take(length)) return new Reader(this.#buffer, 0, 0).#failing();
    return new Reader(this.#buffer, this.#offset - length, this.#offset);
  }

  skip(length: number): void {
    this.#take(length);
  }

  #failing(): this {
    this.failed = true;
    return this;
  }

  #take(length: number): boolean {
    if (this.failed || this.#offset + length > this.#end) {
      this.failed = true;
      return false;
    }
    this.#offset += length;
    return true;
  }
}
