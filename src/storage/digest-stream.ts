import { createHash, type Hash } from 'node:crypto';
import { R2Errors } from './errors.ts';
import { noteStreamedBytes } from './gc-nudge.ts';
import type { ChecksumAlgorithm, Checksums } from './types.ts';

export interface MeasuredSource {
  /** The same bytes, hashed and counted on the way through. */
  source: AsyncIterable<Uint8Array>;
  /** Digests (hex) and size, valid once `source` has been fully consumed. */
  result(): { size: number; checksums: Checksums };
}

/**
 * Wraps an upload body so its digests are computed while it streams to the blob store (no second
 * pass, no buffering). Refuses the body as soon as it passes `maxBytes`, and at the end if it is not
 * exactly `expectedBytes` long, so a truncated upload never becomes an object.
 */
export function measure(
  body: AsyncIterable<Uint8Array>,
  options: { algorithms: readonly ChecksumAlgorithm[]; maxBytes: number; expectedBytes?: number | undefined },
): MeasuredSource {
  const hashes = new Map<ChecksumAlgorithm, Hash>();
  for (const algorithm of new Set<ChecksumAlgorithm>(['md5', ...options.algorithms]))
    hashes.set(algorithm, createHash(algorithm));
  let size = 0;
  let done = false;
  async function* source() {
    for await (const chunk of body) {
      size += chunk.byteLength;
      if (size > options.maxBytes) throw R2Errors.entityTooLarge();
      // Longer than declared: refused at once, not after storing (or, for inline bodies, buffering) it all.
      if (options.expectedBytes !== undefined && size > options.expectedBytes) throw R2Errors.incompleteBody();
      for (const hash of hashes.values()) hash.update(chunk);
      noteStreamedBytes(chunk.byteLength);
      yield chunk;
    }
    if (options.expectedBytes !== undefined && size !== options.expectedBytes) throw R2Errors.incompleteBody();
    done = true;
  }
  return {
    source: source(),
    result() {
      if (!done) throw new Error('measure(): the source was not fully consumed');
      const checksums: Checksums = {};
      for (const [algorithm, hash] of hashes) checksums[algorithm] = hash.digest('hex');
      return { size, checksums };
    },
  };
}

/** How R2 names each algorithm in its BadDigest message. */
const ALGORITHM_NAMES: Record<ChecksumAlgorithm, string> = {
  md5: 'MD5',
  sha1: 'SHA-1',
  sha256: 'SHA-256',
  sha384: 'SHA-384',
  sha512: 'SHA-512',
};

/** Compares digests the client declared (hex) with what was received; the first mismatch is BadDigest. */
export function verifyDigests(declared: Checksums, received: Checksums): void {
  for (const [algorithm, expected] of Object.entries(declared) as [ChecksumAlgorithm, string | undefined][]) {
    const actual = received[algorithm];
    if (expected !== undefined && expected.toLowerCase() !== actual) {
      throw R2Errors.badDigest(ALGORITHM_NAMES[algorithm], expected.toLowerCase(), actual ?? '');
    }
  }
}

const DIGEST_HEX_LENGTH: Record<ChecksumAlgorithm, number> = { md5: 32, sha1: 40, sha256: 64, sha384: 96, sha512: 128 };

/** A declared digest must have its algorithm's length before any byte is stored. */
export function assertDigestShapes(declared: Checksums): void {
  for (const [algorithm, value] of Object.entries(declared) as [ChecksumAlgorithm, string | undefined][]) {
    if (value !== undefined && !new RegExp(`^[0-9a-fA-F]{${DIGEST_HEX_LENGTH[algorithm]}}$`).test(value)) {
      throw R2Errors.invalidDigest(algorithm);
    }
  }
}
