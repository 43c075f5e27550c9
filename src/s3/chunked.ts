import { createHash } from 'node:crypto';
import { EMPTY_SHA256, sha256Hex, signaturesEqual, type SigningKey } from './sigv4.ts';
import { S3Errors } from './errors.ts';

/** What per-chunk signatures are checked against (STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]). */
export interface ChunkSigning {
  key: SigningKey;
  amzDate: string;
  scope: string;
  /** The request's own signature: the first chunk's "previous signature". */
  seedSignature: string;
}

/** A chunk header line is `<hex size>[;chunk-signature=<sig>]`: anything much longer is not one. */
const MAX_LINE = 4096;
const MAX_TRAILER_LINES = 16;
/**
 * A signed chunk is held until its signature is checked, so it must fit in memory: SDKs send 64 KiB chunks, and
 * AWS's own guidance tops out at a few MiB.
 */
export const MAX_SIGNED_CHUNK = 16 * 2 ** 20;

/**
 * Reads a stream by lines and by counts, handing out slices of the chunks it received (no copy unless a
 * line straddles two chunks).
 */
class ByteReader {
  readonly #source: AsyncIterator<Buffer>;
  #buffer: Buffer = Buffer.alloc(0);

  constructor(source: AsyncIterable<Buffer>) {
    this.#source = source[Symbol.asyncIterator]();
  }

  async #fill(): Promise<boolean> {
    const next = await this.#source.next();
    if (next.done) return false;
    this.#buffer = this.#buffer.length === 0 ? next.value : Buffer.concat([this.#buffer, next.value]);
    return true;
  }

  /** The next line without its CRLF (or LF); undefined at the very end of the stream. */
  async line(): Promise<string | undefined> {
    for (;;) {
      const newline = this.#buffer.indexOf(10);
      if (newline !== -1) {
        const end = newline > 0 && this.#buffer[newline - 1] === 13 ? newline - 1 : newline;
        const line = this.#buffer.toString('latin1', 0, end);
        this.#buffer = this.#buffer.subarray(newline + 1);
        return line;
      }
      if (this.#buffer.length > MAX_LINE) throw S3Errors.invalidChunk('A chunk header line is too long.');
      if (!(await this.#fill())) {
        if (this.#buffer.length === 0) return undefined;
        throw S3Errors.incompleteBody();
      }
    }
  }

  /** `count` bytes, as slices. */
  async *take(count: number): AsyncGenerator<Buffer> {
    let remaining = count;
    while (remaining > 0) {
      if (this.#buffer.length === 0 && !(await this.#fill())) throw S3Errors.incompleteBody();
      const piece = this.#buffer.length <= remaining ? this.#buffer : this.#buffer.subarray(0, remaining);
      this.#buffer = this.#buffer.subarray(piece.length);
      remaining -= piece.length;
      yield piece;
    }
  }
}

/**
 * Decodes an `aws-chunked` body: `<hex size>[;chunk-signature=<sig>]\r\n<bytes>\r\n` ... a zero-size chunk,
 * then, with `trailer`, header lines (`x-amz-checksum-crc32:<base64>`, and `x-amz-trailer-signature` when
 * signed) and an empty line. With `signing`, every chunk's signature is checked before any of its bytes is handed
 * on (chained from the request's signature), and the trailer's. The trailer's fields are handed to `onTrailer` before
 * the stream ends, so a consumer sees a bad checksum as the stream's failure and stores nothing.
 */
export async function* decodeAwsChunked(
  source: AsyncIterable<Buffer>,
  options: { signing: ChunkSigning | undefined; trailer: boolean; onTrailer: (fields: Map<string, string>) => void },
): AsyncGenerator<Buffer> {
  const reader = new ByteReader(source);
  const { signing } = options;
  let previous = signing?.seedSignature ?? '';
  for (;;) {
    const header = await reader.line();
    if (header === undefined) throw S3Errors.incompleteBody();
    const [sizeText = '', ...extensions] = header.split(';');
    if (!/^[0-9a-fA-F]{1,15}$/.test(sizeText.trim())) throw S3Errors.invalidChunk('A chunk size is not hexadecimal.');
    const size = Number.parseInt(sizeText.trim(), 16);
    const signature = extensions
      .map((e) => e.trim())
      .find((e) => e.startsWith('chunk-signature='))
      ?.slice('chunk-signature='.length);
    if (signing) {
      if (signature === undefined) throw S3Errors.invalidChunk('A chunk carries no chunk-signature.');
      if (size > MAX_SIGNED_CHUNK) {
        throw S3Errors.invalidChunk(`A signed chunk may be at most ${MAX_SIGNED_CHUNK} bytes.`);
      }
      // The chunk's bytes go nowhere before its signature holds: a forged chunk must not reach a file or a part.
      const hash = createHash('sha256');
      const pieces: Buffer[] = [];
      for await (const piece of reader.take(size)) {
        hash.update(piece);
        pieces.push(piece);
      }
      const stringToSign = `AWS4-HMAC-SHA256-PAYLOAD\n${signing.amzDate}\n${signing.scope}\n${previous}\n${EMPTY_SHA256}\n${hash.digest('hex')}`;
      if (!signaturesEqual(signing.key.sign(stringToSign), signature)) throw S3Errors.signatureDoesNotMatch();
      previous = signature;
      yield* pieces;
    } else {
      yield* reader.take(size);
    }
    if (size === 0) break;
    const end = await reader.line();
    if (end !== '') throw S3Errors.invalidChunk('A chunk does not end where its size says.');
  }
  if (!options.trailer) {
    const end = await reader.line();
    if (end !== undefined && end !== '') throw S3Errors.invalidChunk('Unexpected data after the last chunk.');
    return;
  }
  const fields = new Map<string, string>();
  let trailerText = '';
  let trailerSignature: string | undefined;
  for (let lines = 0; ; lines++) {
    const line = await reader.line();
    if (line === undefined || line === '') break;
    if (lines >= MAX_TRAILER_LINES) throw S3Errors.invalidChunk('Too many trailing headers.');
    const colon = line.indexOf(':');
    if (colon === -1) throw S3Errors.invalidChunk('A trailing header has no value.');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'x-amz-trailer-signature') {
      trailerSignature = value;
      continue;
    }
    fields.set(name, value);
    trailerText += `${name}:${value}\n`;
  }
  if (signing) {
    if (trailerSignature === undefined) throw S3Errors.invalidChunk('The trailer carries no x-amz-trailer-signature.');
    const stringToSign = `AWS4-HMAC-SHA256-TRAILER\n${signing.amzDate}\n${signing.scope}\n${previous}\n${sha256Hex(trailerText)}`;
    if (!signaturesEqual(signing.key.sign(stringToSign), trailerSignature)) {
      throw S3Errors.signatureDoesNotMatch();
    }
  }
  options.onTrailer(fields);
}
