import { createHash, type Hash } from 'node:crypto';
import { crc32 } from 'node:zlib';

/** The checksum algorithms R2 lists (x-amz-checksum-<name>), values base64 of the big-endian digest. */
export const S3_CHECKSUMS = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256'] as const;
export type S3ChecksumName = (typeof S3_CHECKSUMS)[number];

export interface Checksummer {
  update(chunk: Uint8Array): void;
  /** base64 of the digest, as the x-amz-checksum-* headers carry it. */
  digest(): string;
}

export function isChecksumName(name: string): name is S3ChecksumName {
  return (S3_CHECKSUMS as readonly string[]).includes(name);
}

export function checksummer(name: S3ChecksumName): Checksummer {
  switch (name) {
    case 'crc32': {
      let value = 0;
      return {
        update: (chunk) => (value = crc32(chunk, value)),
        digest: () => u32(value),
      };
    }
    case 'crc32c': {
      let value = 0xffffffff;
      return {
        update: (chunk) => (value = crc32cUpdate(value, chunk)),
        digest: () => u32((value ^ 0xffffffff) >>> 0),
      };
    }
    case 'crc64nvme':
      return crc64nvme();
    case 'sha1':
    case 'sha256': {
      const hash: Hash = createHash(name);
      return { update: (chunk) => hash.update(chunk), digest: () => hash.digest('base64') };
    }
  }
}

function u32(value: number): string {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes.toString('base64');
}

const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32cUpdate(crc: number, chunk: Uint8Array): number {
  let c = crc;
  for (let i = 0; i < chunk.length; i++) c = CRC32C_TABLE[(c ^ chunk[i]!) & 0xff]! ^ (c >>> 8);
  return c >>> 0;
}

/**
 * CRC-64/NVME (reflected polynomial 0x9a6c9329ac4bc9b5, init and xorout all ones), on two 32-bit halves so
 * no BigInt arithmetic runs per byte.
 */
const CRC64_TABLES = (() => {
  const lo = new Uint32Array(256);
  const hi = new Uint32Array(256);
  const poly = 0x9a6c9329ac4bc9b5n;
  for (let n = 0; n < 256; n++) {
    let c = BigInt(n);
    for (let k = 0; k < 8; k++) c = c & 1n ? poly ^ (c >> 1n) : c >> 1n;
    lo[n] = Number(c & 0xffffffffn);
    hi[n] = Number(c >> 32n);
  }
  return { lo, hi };
})();

function crc64nvme(): Checksummer {
  let lo = 0xffffffff;
  let hi = 0xffffffff;
  const { lo: tLo, hi: tHi } = CRC64_TABLES;
  return {
    update(chunk) {
      for (let i = 0; i < chunk.length; i++) {
        const index = (lo ^ chunk[i]!) & 0xff;
        lo = (((lo >>> 8) | (hi << 24)) ^ tLo[index]!) >>> 0;
        hi = ((hi >>> 8) ^ tHi[index]!) >>> 0;
      }
    },
    digest() {
      const bytes = Buffer.alloc(8);
      bytes.writeUInt32BE((hi ^ 0xffffffff) >>> 0, 0);
      bytes.writeUInt32BE((lo ^ 0xffffffff) >>> 0, 4);
      return bytes.toString('base64');
    },
  };
}
