/** Workers KV's limits (Cloudflare's, which the bundled engine enforces too). */
export const KV_LIMITS = {
  maxKeyBytes: 512,
  maxValueBytes: 25 * 1024 * 1024,
  maxMetadataBytes: 1024,
  /** Pairs one bulk write or delete may carry (the API's; wrangler sends 5,000 at a time). */
  maxBulkItems: 10_000,
  /** A bulk write's whole body (Cloudflare's 100 MB). */
  maxBulkBodyBytes: 100 * 1024 * 1024,
  /** Keys one bulk get may ask for. */
  maxBulkGet: 100,
  minListLimit: 10,
  maxListLimit: 1000,
} as const;

/** Namespaces one account may have when the operator sets nothing (Cloudflare's 1,000). */
export const DEFAULT_MAX_NAMESPACES_PER_ACCOUNT = 1000;

export const utf8Length = (text: string): number => Buffer.byteLength(text, 'utf8');
