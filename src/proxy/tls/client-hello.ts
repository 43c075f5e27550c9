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
  const extensions = new Reader(reader.bytes(reader.u16()));
  while (!extensions.failed && extensions.remaining > 0) {
    const type = extensions.u16();
    const body = new Reader(extensions.bytes(extensions.u16()));
    if (type === SERVER_NAME_EXTENSION) {
      const list = new Reader(body.bytes(body.u16()));
      while (!list.failed && list.remaining > 0) {
        const nameType = list.u8();
        const name = list.bytes(list.u16());
        if (nameType === 0 && result.serverName === undefined)
          result.serverName = name.toString('latin1').toLowerCase();
      }
      if (list.failed) return new Error('malformed TLS server_name extension');
    } else if (type === ALPN_EXTENSION) {
      const list = new Reader(body.bytes(body.u16()));
      while (!list.failed && list.remaining > 0) result.protocols.push(list.bytes(list.u8()).toString('latin1'));
      if (list.failed) return new Error('malformed TLS ALPN extension');
    }
    if (body.failed) return new Error('malformed TLS extension');
  }
  return extensions.failed || reader.failed ? new Error('malformed TLS ClientHello') : result;
}

/** Big-endian reads that record a read past the end instead of throwing. */
class Reader {
  failed = false;
  #offset = 0;
  readonly #buffer: Buffer;

  constructor(buffer: Buffer) {
    this.#buffer = buffer;
  }

  get remaining(): number {
    return this.#buffer.length - this.#offset;
  }

  u8(): number {
    return this.#take(1)?.[0] ?? 0;
  }

  u16(): number {
    const bytes = this.#take(2);
    return bytes ? bytes.readUInt16BE(0) : 0;
  }

  bytes(length: number): Buffer {
    return this.#take(length) ?? Buffer.alloc(0);
  }

  skip(length: number): void {
    this.#take(length);
  }

  #take(length: number): Buffer | undefined {
    if (this.failed || this.#offset + length > this.#buffer.length) {
      this.failed = true;
      return undefined;
    }
    const slice = this.#buffer.subarray(this.#offset, this.#offset + length);
    this.#offset += length;
    return slice;
  }
}
