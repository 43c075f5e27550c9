import { z } from 'zod';

/** Cloudflare's limits for static assets (Workers Paid): files per version and bytes per file. */
export const ASSET_LIMITS = {
  maxFilesPerVersion: 100_000,
  maxFileBytes: 25 * 1024 * 1024,
  /** How long an upload session's token lets its files be sent, and a completion token be used. */
  sessionSeconds: 3600,
  /** Longest manifest path (bytes). */
  maxPathLength: 4096,
} as const;

/** wrangler's asset hash: the first 32 hex digits of a SHA-256 (of the base64 content and the extension). */
export const ASSET_HASH = /^[0-9a-f]{32}$/;

/**
 * A manifest path becomes a file below the version's directory: absolute, no empty, `.` or `..` segment, no
 * backslash or NUL, so it can never name anything outside it.
 */
function isSafeAssetPath(path: string): boolean {
  if (!path.startsWith('/') || path.length < 2 || path.includes('\\') || path.includes('\0')) return false;
  return path
    .slice(1)
    .split('/')
    .every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

export const ManifestEntrySchema = z.object({
  hash: z.string().regex(ASSET_HASH, 'hash must be 32 lowercase hex digits, as wrangler computes it'),
  size: z
    .number()
    .int()
    .min(0)
    .max(ASSET_LIMITS.maxFileBytes, `an asset may be at most ${ASSET_LIMITS.maxFileBytes} bytes (25 MiB)`),
});
export type ManifestEntry = z.infer<typeof ManifestEntrySchema>;
export type AssetManifest = Record<string, ManifestEntry>;

export const UploadSessionSchema = z.object({
  manifest: z
    .record(
      z
        .string()
        .max(ASSET_LIMITS.maxPathLength)
        .refine(isSafeAssetPath, 'asset paths start with "/" and have no empty, "." or ".." segments'),
      ManifestEntrySchema,
    )
    .refine((m) => Object.keys(m).length <= ASSET_LIMITS.maxFilesPerVersion, {
      message: `a version may have at most ${ASSET_LIMITS.maxFilesPerVersion} assets`,
    }),
});

/** `assets.config` of a script upload's metadata, as wrangler sends it. */
export const AssetConfigSchema = z
  .object({
    html_handling: z.enum(['auto-trailing-slash', 'force-trailing-slash', 'drop-trailing-slash', 'none']).optional(),
    not_found_handling: z.enum(['single-page-application', '404-page', 'none']).optional(),
    run_worker_first: z.union([z.boolean(), z.array(z.string().max(1000)).max(100)]).optional(),
    base_path: z.string().max(1000).optional(),
    _redirects: z
      .string()
      .max(1024 * 1024)
      .optional(),
    _headers: z
      .string()
      .max(1024 * 1024)
      .optional(),
  })
  .loose();
export type AssetConfig = z.infer<typeof AssetConfigSchema>;

/** `assets` of a script upload's metadata: the completion token of an upload session and how to serve. */
export const UploadAssetsSchema = z.object({
  jwt: z.string().min(1).max(8192).optional(),
  config: AssetConfigSchema.optional(),
});

/** What a version keeps of its assets: the files (path -> hash, size), how they are served, and the binding. */
export interface VersionAssets {
  manifest: AssetManifest;
  config: AssetConfig;
  /** The name of the `assets` binding (`env.ASSETS`), if the version has one. */
  binding?: string | undefined;
}

/** The JSON workerd's `assets` service takes (workerd.capnp AssetsService.config). */
export function workerdAssetsConfig(config: AssetConfig): string {
  return JSON.stringify({
    ...(config.html_handling ? { html_handling: config.html_handling } : {}),
    ...(config.not_found_handling ? { not_found_handling: config.not_found_handling } : {}),
    ...(config.base_path ? { base_path: config.base_path } : {}),
    ...(config.run_worker_first !== undefined ? { run_worker_first: config.run_worker_first } : {}),
    ...(config._headers !== undefined ? { headers: config._headers } : {}),
    ...(config._redirects !== undefined ? { redirects: config._redirects } : {}),
  });
}
