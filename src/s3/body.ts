import { createHash, type Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  checksummer,
  isChecksumName,
  isChecksumValue,
  S3_CHECKSUMS,
  type Checksummer,
  type S3ChecksumName,
} from './checksums.ts';
import { decodeAwsChunked, type ChunkSigning } from './chunked.ts';
import { S3Errors } from './errors.ts';
import { UNSIGNED_PAYLOAD, type SignedRequest, type SigningKey } from './sigv4.ts';

/** A request body as the operations read it: decoded, and checked against what the client declared. */
export interface RequestBody {
  stream: AsyncIterable<Uint8Array>;
  /** The decoded length when the client declared it (Content-Length or x-amz-decoded-content-length). */
  size: number | undefined;
  /** The client's checksum (x-amz-checksum-*, in a header or the trailer), once the body has been read. */
  checksum: { name: S3ChecksumName; value: () => string | undefined } | undefined;
  /** Hex digests declared in headers (Content-MD5, x-amz-checksum-sha1/-sha256), for the engine to store. */
  declared: { md5?: string; sha1?: string; sha256?: string };
}

const STREAMING_SIGNED = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD';
const STREAMING_SIGNED_TRAILER = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER';
const STREAMING_UNSIGNED_TRAILER = 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';

/**
 * The body of a verified request. Every check (the payload's SHA-256, per-chunk signatures, Content-MD5, the
 * x-amz-checksum-*) fails the stream before its end, so an engine write that consumes it stores nothing.
 */
export function openBody(req: IncomingMessage, signed: SignedRequest, signingKey: SigningKey): RequestBody {
  const payload = signed.payloadHash;
  const chunked =
    payload === STREAMING_SIGNED || payload === STREAMING_SIGNED_TRAILER || payload === STREAMING_UNSIGNED_TRAILER;
  if (!chunked && payload !== UNSIGNED_PAYLOAD && !/^[0-9a-f]{64}$/.test(payload)) {
    throw S3Errors.invalidArgument(
      'x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER], STREAMING-UNSIGNED-PAYLOAD-TRAILER or the SHA-256 hex of the payload.',
    );
  }
  const headers = req.headers;
  const sizeHeader = chunked ? headers['x-amz-decoded-content-length'] : headers['content-length'];
  if (sizeHeader !== undefined && !/^\d+$/.test(String(sizeHeader))) {
    throw S3Errors.invalidArgument('The content length is not a number.');
  }
  const size = sizeHeader === undefined ? undefined : Number(sizeHeader);

  let trailer: Map<string, string> | undefined;
  let stream: AsyncIterable<Buffer> = req;
  if (chunked) {
    const signing: ChunkSigning | undefined =
      payload === STREAMING_UNSIGNED_TRAILER
        ? undefined
        : { key: signingKey, amzDate: signed.amzDate, scope: signed.scope, seedSignature: signed.signature };
    stream = decodeAwsChunked(req, {
      signing,
      trailer: payload !== STREAMING_SIGNED,
      onTrailer: (fields) => (trailer = fields),
    });
  }

  const checks: Check[] = [];
  const declared: RequestBody['declared'] = {};
  if (/^[0-9a-f]{64}$/.test(payload)) {
    checks.push(hashCheck('sha256', 'hex', () => payload, S3Errors.contentSha256Mismatch));
  }
  const md5 = headers['content-md5'] as string | undefined;
  if (md5 !== undefined) {
    const bytes = Buffer.from(md5, 'base64');
    if (bytes.length !== 16) throw S3Errors.invalidDigest();
    declared.md5 = bytes.toString('hex');
    checks.push(hashCheck('md5', 'base64', () => md5, S3Errors.contentMd5Mismatch));
  }
  const checksum = checksumOf(headers, () => trailer);
  if (checksum) {
    const header = headers[`x-amz-checksum-${checksum.name}`];
    if ((checksum.name === 'sha1' || checksum.name === 'sha256') && typeof header === 'string') {
      declared[checksum.name] = Buffer.from(header, 'base64').toString('hex');
    }
    const sum = checksummer(checksum.name);
    checks.push({
      update: (chunk) => sum.update(chunk),
      verify: async () => {
        const expected = checksum.value();
        if (expected === undefined)
          throw S3Errors.invalidRequest(`The trailer names x-amz-checksum-${checksum.name} but does not carry it.`);
        if (!isChecksumValue(checksum.name, expected)) throw invalidChecksumValue(checksum.name);
        if ((await sum.digest()) !== expected) throw S3Errors.badDigest(checksum.name);
      },
    });
  }
  return { stream: checks.length === 0 ? stream : checked(stream, checks), size, checksum, declared };
}

/** Which x-amz-checksum-* the client sends: in a header, or announced by x-amz-trailer. */
function checksumOf(
  headers: IncomingMessage['headers'],
  trailer: () => Map<string, string> | undefined,
): RequestBody['checksum'] {
  const given = S3_CHECKSUMS.filter((name) => headers[`x-amz-checksum-${name}`] !== undefined);
  if (given.length > 1) {
    throw S3Errors.invalidRequest(
      'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.',
    );
  }
  const name = given[0];
  if (name !== undefined) {
    const value = headers[`x-amz-checksum-${name}`];
    // A value that is not the base64 of a digest of the algorithm's size is refused before the body is read.
    if (typeof value !== 'string' || !isChecksumValue(name, value)) throw invalidChecksumValue(name);
    return { name, value: () => value };
  }
  const announced = headers['x-amz-trailer'];
  if (typeof announced === 'string') {
    const name = announced
      .trim()
      .toLowerCase()
      .replace(/^x-amz-checksum-/, '');
    if (!isChecksumName(name)) throw S3Errors.invalidRequest(`The trailer ${announced} is not supported.`);
    return { name, value: () => trailer()?.get(`x-amz-checksum-${name}`) };
  }
  return undefined;
}

const invalidChecksumValue = (name: S3ChecksumName) =>
  S3Errors.invalidRequest(`Value for x-amz-checksum-${name} header is invalid.`);

interface Check {
  update(chunk: Uint8Array): void;
  verify(): void | Promise<void>;
}

function hashCheck(algorithm: string, encoding: 'hex' | 'base64', expected: () => string, failure: () => Error): Check {
  const hash: Hash = createHash(algorithm);
  return {
    update: (chunk) => hash.update(chunk),
    verify: () => {
      if (hash.digest(encoding) !== expected()) throw failure();
    },
  };
}

async function* checked(source: AsyncIterable<Buffer>, checks: Check[]): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    for (const check of checks) check.update(chunk);
    yield chunk;
  }
  for (const check of checks) await check.verify();
}

export type { Checksummer };
