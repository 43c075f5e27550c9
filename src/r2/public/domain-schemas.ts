import { z } from 'zod';

export const MIN_TLS_VERSIONS = ['1.0', '1.1', '1.2', '1.3'] as const;
const Ciphers = z.array(z.string().min(1).max(100)).max(100);

/** PUT .../domains/managed (the SDK's ManagedUpdateParams). */
export const ManagedUpdateSchema = z.object({ enabled: z.boolean() });

/** POST .../domains/custom (the SDK's CustomCreateParams; `enabled` defaults to true as R2 documents). */
export const CustomCreateSchema = z.object({
  domain: z.string().min(1).max(253),
  zoneId: z.string().min(1).max(64),
  enabled: z.boolean().default(true),
  minTLS: z.enum(MIN_TLS_VERSIONS).optional(),
  ciphers: Ciphers.optional(),
});

/** PUT .../domains/custom/{domain} (the SDK's CustomUpdateParams: what is absent keeps its value). */
export const CustomUpdateSchema = z.object({
  enabled: z.boolean().optional(),
  minTLS: z.enum(MIN_TLS_VERSIONS).optional(),
  ciphers: Ciphers.optional(),
});

export type CustomCreate = z.infer<typeof CustomCreateSchema>;
export type CustomUpdate = z.infer<typeof CustomUpdateSchema>;
