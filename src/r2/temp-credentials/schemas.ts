import { z } from 'zod';
import { TEMP_PERMISSIONS } from './scope.ts';

/** R2's longest lifetime for temporary credentials (7 days). */
export const MAX_TEMP_TTL_SECONDS = 604_800;
/** Object keys are at most 1024 bytes on R2; so is any prefix worth naming. */
const PATH = z
  .string()
  .min(1)
  .refine((value) => Buffer.byteLength(value, 'utf8') <= 1024, 'paths are at most 1024 bytes');

/** The body of POST /accounts/{a}/r2/temp-access-credentials, as the SDK's TemporaryCredentialCreateParams. */
export const TempCredentialsRequestSchema = z.object({
  bucket: z.string().min(1).max(63),
  parentAccessKeyId: z.string().min(1).max(128),
  permission: z.enum(TEMP_PERMISSIONS),
  // R2's schema gives 900 as the default; the SDK always sends one.
  ttlSeconds: z.number().int().min(1).max(MAX_TEMP_TTL_SECONDS).default(900),
  prefixes: z.array(PATH).max(1000).optional(),
  objects: z.array(PATH).max(1000).optional(),
});

export type TempCredentialsRequest = z.infer<typeof TempCredentialsRequestSchema>;
