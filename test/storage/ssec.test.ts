import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  cryptAt,
  decryptStream,
  encryptStream,
  ssecAccess,
  ssecKeyFrom,
  ssecRecordFor,
} from '../../src/storage/ssec.ts';

async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

async function* chunked(data: Buffer, size: number) {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}

describe('SSE-C at rest (AES-256-CTR, ranges decrypted in place)', () => {
  const key = ssecKeyFrom(randomBytes(32));

  // An IV whose low 64 bits are all ones: the block counter carries into the high half within a few blocks,
  // where a 64-bit counter would wrap; the range decryption must compute the counter as OpenSSL increments it.
  for (const iv of [
    randomBytes(16).toString('base64'),
    Buffer.from('00000000000000fffffffffffffffffd', 'hex').toString('base64'),
    Buffer.alloc(16, 0xff).toString('base64'),
  ]) {
    it(`decrypts any range as the whole stream would (IV ${Buffer.from(iv, 'base64').toString('hex')})`, async () => {
      const plain = randomBytes(10_000);
      const cipher = await collect(encryptStream(chunked(plain, 777), key, iv));
      expect(cipher.length).toBe(plain.length);
      expect(cipher.equals(plain)).toBe(false);
      for (const [offset, length] of [
        [0, 10_000],
        [1, 15],
        [15, 2],
        [16, 16],
        [17, 4000],
        [9_983, 17],
      ] as const) {
        const slice = cipher.subarray(offset, offset + length);
        expect(cryptAt(slice, key, iv, offset).equals(plain.subarray(offset, offset + length))).toBe(true);
        const streamed = await collect(decryptStream(chunked(slice, 100), key, iv, offset));
        expect(streamed.equals(plain.subarray(offset, offset + length))).toBe(true);
      }
    });
  }

  it('checks a key against the salted HMAC, and refuses a missing, a wrong or an unneeded key', () => {
    const record = ssecRecordFor(key);
    expect(JSON.stringify(record)).not.toContain(key.key.toString('base64'));
    expect(ssecAccess(record, key)).toBe(key);
    expect(() => ssecAccess(record, undefined)).toThrow(expect.objectContaining({ status: 400, code: 10080 }));
    expect(() => ssecAccess(record, ssecKeyFrom(randomBytes(32)))).toThrow(
      expect.objectContaining({ status: 403, code: 10082 }),
    );
    expect(() => ssecAccess(undefined, key)).toThrow(expect.objectContaining({ status: 400, code: 10081 }));
    expect(ssecAccess(undefined, undefined)).toBeUndefined();
    expect(() => ssecKeyFrom(randomBytes(31))).toThrow(expect.objectContaining({ code: 10040 }));
    expect(() => ssecKeyFrom(key.key, 'bm90IHRoZSBtZDU=')).toThrow(expect.objectContaining({ code: 10040 }));
  });
});
