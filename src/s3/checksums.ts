import { Crc32, Crc32c, Crc64Nvme } from '@aws-sdk/checksums/crc';
import { createHash } from 'node:crypto';

/** The checksum algorithms R2 lists (x-amz-checksum-<name>), values base64 of the big-endian digest. */
export const S3_CHECKSUMS = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256'] as const;
export type S3ChecksumName = (typeof S3_CHECKSUMS)[number];

/** Digest sizes in bytes: a header value that does not decode to this many is malformed, not a mismatch. */
const DIGEST_BYTES: Record<S3ChecksumName, number> = { crc32: 4, crc32c: 4, crc64nvme: 8, sha1: 20, sha256: 32 };

export interface Checksummer {
  update(chunk: Uint8Array): void;
  /** base64 of the digest, as the x-amz-checksum-* headers carry it. */
  digest(): Promise<string>;
}

export function isChecksumName(name: string): name is S3ChecksumName {
  return (S3_CHECKSUMS as readonly string[]).includes(name);
}

/** Whether `value` is the base64 of a digest of `name`'s size (what S3 checks before comparing). */
export function isChecksumValue(name: S3ChecksumName, value: string): boolean {
  return /^[A-Za-z0-9+/]+={0,2}$/.test(value) && Buffer.from(value, 'base64').length === DIGEST_BYTES[name];
}

/** The CRCs are the AWS SDK's own implementations (the ones its clients sign with); SHAs are node:crypto's. */
export function checksummer(name: S3ChecksumName): Checksummer {
  switch (name) {
    case 'crc32':
    case 'crc32c':
    case 'crc64nvme': {
      const crc = name === 'crc32' ? new Crc32() : name === 'crc32c' ? new Crc32c() : new Crc64Nvme();
      return {
        update: (chunk) => crc.update(chunk),
        digest: async () => Buffer.from(await crc.digest()).toString('base64'),
      };
    }
    case 'sha1':
    case 'sha256': {
      const hash = createHash(name);
      return { update: (chunk) => hash.update(chunk), digest: async () => hash.digest('base64') };
    }
  }
}
