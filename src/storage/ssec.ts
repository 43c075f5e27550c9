import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { LedgeError } from '../shared/errors.ts';

/**
 * SSE-C: objects encrypted at rest with a key the client sends on every request (R2 and S3 offer it on
 * the S3 API; the binding takes it as `ssecKey`). The key itself is never stored. What is stored:
 *
 * - per object (and per multipart upload), an `SsecRecord`: the key's MD5 (which S3 and R2 echo, and the
 *   binding's `head()` shows as `ssecKeyMd5`) and a randomly salted HMAC-SHA256 of the key, the check a
 *   later request's key must pass (as S3 stores it);
 * - per piece of bytes (each blob segment, the inline body), a random 16-byte IV.
 *
 * The bytes are AES-256-CTR under the customer key with that IV: a stream cipher whose keystream at any
 * offset can be computed directly, so a range is decrypted without reading what precedes it, and the
 * ciphertext has the plaintext's length (sizes, ranges and part boundaries stay as they are). The blob
 * store never sees the difference: encryption is a transform of the stream written and read.
 */
export interface SsecRecord {
  algorithm: 'AES256';
  /** base64 MD5 of the key. */
  keyMd5: string;
  /** base64 random salt and base64 HMAC-SHA256(salt, key). */
  salt: string;
  check: string;
}

/** A key as a request presents it (already checked to be 32 bytes). */
export interface SsecKey {
  key: Buffer;
  /** base64 MD5 of `key`. */
  keyMd5: string;
}

const KEY_BYTES = 32;
const BLOCK = 16;
const CIPHER = 'aes-256-ctr';

/**
 * The SSE-C failures. R2 documents no v4 codes for them; these are Ledge's, chosen so the S3 door maps
 * them to S3's own codes by status: 400 InvalidRequest (no key for an encrypted object, a key for a plain
 * one), 403 AccessDenied (the wrong key), 400 InvalidArgument for a malformed key (10040, as R2's).
 */
export const SsecErrors = {
  keyRequired: () =>
    new LedgeError(
      400,
      10080,
      'The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.',
    ),
  notApplicable: () => new LedgeError(400, 10081, 'The encryption parameters are not applicable to this object.'),
  wrongKey: () =>
    new LedgeError(403, 10082, 'The provided encryption key does not match the key the object was stored with.'),
  invalidKey: (message = 'The secret key was invalid for the specified algorithm.') =>
    new LedgeError(400, 10040, message),
} as const;

/** A key from its raw bytes; `md5` (base64), when the client sent one, must match. */
export function ssecKeyFrom(key: Buffer, md5?: string): SsecKey {
  if (key.length !== KEY_BYTES) throw SsecErrors.invalidKey();
  const keyMd5 = createHash('md5').update(key).digest('base64');
  if (md5 !== undefined && md5 !== keyMd5) {
    throw SsecErrors.invalidKey('The calculated MD5 hash of the key did not match the hash that was provided.');
  }
  return { key, keyMd5 };
}

/** The binding's form: 64 lowercase hex digits (workerd checks the shape before sending it). */
export function ssecKeyFromHex(hex: string): SsecKey {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw SsecErrors.invalidKey('SSE-C Key must be 32 bytes in length');
  return ssecKeyFrom(Buffer.from(hex, 'hex'));
}

/** The record stored for an object written with `key`: its MD5 and a salted HMAC, never the key. */
export function ssecRecordFor(key: SsecKey): SsecRecord {
  const salt = randomBytes(16);
  return {
    algorithm: 'AES256',
    keyMd5: key.keyMd5,
    salt: salt.toString('base64'),
    check: createHmac('sha256', salt).update(key.key).digest('base64'),
  };
}

/**
 * Whether a request may read (or extend) something stored under `record` with `key`: an encrypted object
 * needs its key, a plain one must not be given one. Throws the failure; returns the key to decrypt with.
 */
export function ssecAccess(record: SsecRecord | undefined, key: SsecKey | undefined): SsecKey | undefined {
  if (!record) {
    if (key) throw SsecErrors.notApplicable();
    return undefined;
  }
  if (!key) throw SsecErrors.keyRequired();
  const expected = Buffer.from(record.check, 'base64');
  const actual = createHmac('sha256', Buffer.from(record.salt, 'base64')).update(key.key).digest();
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) throw SsecErrors.wrongKey();
  return key;
}

export function newIv(): string {
  return randomBytes(BLOCK).toString('base64');
}

/** Encrypts a stream with AES-256-CTR from its first byte. */
export async function* encryptStream(
  source: AsyncIterable<Uint8Array>,
  key: SsecKey,
  iv: string,
): AsyncGenerator<Buffer> {
  const cipher = createCipheriv(CIPHER, key.key, Buffer.from(iv, 'base64'));
  for await (const chunk of source) {
    if (chunk.byteLength > 0) yield cipher.update(chunk);
  }
  const rest = cipher.final();
  if (rest.length > 0) yield rest;
}

/** One buffer encrypted (or decrypted: CTR is its own inverse) as if it began at `offset` of its piece. */
export function cryptAt(bytes: Uint8Array, key: SsecKey, iv: string, offset: number): Buffer {
  const decipher = decipherAt(key, iv, offset);
  return Buffer.concat([decipher.update(bytes), decipher.final()]);
}

/** Decrypts a stream of a piece's bytes that starts at `offset` of that piece. */
export async function* decryptStream(
  source: AsyncIterable<Uint8Array>,
  key: SsecKey,
  iv: string,
  offset: number,
): AsyncGenerator<Buffer> {
  const decipher = decipherAt(key, iv, offset);
  for await (const chunk of source) {
    if (chunk.byteLength > 0) yield decipher.update(chunk);
  }
  const rest = decipher.final();
  if (rest.length > 0) yield rest;
}

/**
 * A CTR decipher positioned at byte `offset`: the counter block is the IV plus the block index (a 128-bit
 * big-endian sum, as OpenSSL increments it), and the bytes before `offset` within that block are skipped.
 */
function decipherAt(key: SsecKey, iv: string, offset: number) {
  const base = BigInt(`0x${Buffer.from(iv, 'base64').toString('hex')}`);
  const counter = (base + BigInt(Math.floor(offset / BLOCK))) & ((1n << 128n) - 1n);
  const decipher = createDecipheriv(CIPHER, key.key, Buffer.from(counter.toString(16).padStart(32, '0'), 'hex'));
  const skip = offset % BLOCK;
  if (skip > 0) decipher.update(Buffer.alloc(skip));
  return decipher;
}
