import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API keys and tokens are high-entropy random strings, so a single SHA-256 is enough to store them safely
 * (no dictionary to defend against) and keeps authentication cheap on every request.
 */
export function hashCredential(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** Constant-time comparison of two arbitrary strings (hashes both, so lengths never leak). */
export function secretsEqual(a: string, b: string): boolean {
  return digestsEqual(hashCredential(a), hashCredential(b));
}

const CIPHER = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Encrypts secrets at rest (worker secrets, webhook secrets). Output: base64(iv | tag | ciphertext).
 * `aad` binds a ciphertext to its owner (e.g. account/script/name) so it cannot be moved to another row.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
    this.#key = key;
  }

  static generateKey(): Buffer {
    return randomBytes(32);
  }

  /**
   * Names the key without revealing it (an HMAC of a fixed text), so nodes sharing a database can tell
   * whether they seal with the same key.
   */
  fingerprint(): string {
    return createHmac('sha256', this.#key).update('ledge secret key check v1').digest('hex').slice(0, 32);
  }

  /**
   * A key for one purpose (signing upload tokens), derived from this one: every node sharing the database
   * derives the same, and the secret key itself never leaves the box.
   */
  deriveKey(purpose: string): Buffer {
    return createHmac('sha256', this.#key).update(`ledge derived key v1: ${purpose}`).digest();
  }

  seal(plaintext: string, aad = ''): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(CIPHER, this.#key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  open(sealed: string, aad = ''): string {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv(CIPHER, this.#key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}
