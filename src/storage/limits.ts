const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** R2's limits (reference r2.md §1). Custom metadata follows real R2 (8 KiB), not the simulator's 2 KiB. */
export const R2_LIMITS = {
  maxKeyBytes: 1024,
  maxCustomMetadataBytes: 8192,
  maxSinglePutBytes: 5 * GiB - 5 * MiB,
  maxPartBytes: 5 * GiB - 5 * MiB,
  maxObjectBytes: 5 * 1024 * GiB - 5 * GiB,
  minPartBytes: 5 * MiB,
  maxParts: 10_000,
  maxListLimit: 1000,
  maxDeleteKeys: 1000,
  /** Abandoned multipart uploads are aborted after this long. */
  uploadTtlMs: 7 * 24 * 3600 * 1000,
} as const;
