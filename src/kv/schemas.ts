import { z } from 'zod';
import { KV_LIMITS } from './limits.ts';

export const TitleSchema = z.object({ title: z.string() });

export const NamespaceListQuerySchema = z.object({
  order: z.enum(['id', 'title']).optional(),
  direction: z.enum(['asc', 'desc']).optional(),
});

export const BulkWriteSchema = z
  .array(
    z.object({
      key: z.string(),
      value: z.string(),
      base64: z.boolean().optional(),
      expiration: z.number().int().optional(),
      expiration_ttl: z.number().int().optional(),
      metadata: z.unknown().optional(),
    }),
  )
  .max(KV_LIMITS.maxBulkItems);

export const BulkDeleteSchema = z.array(z.string()).max(KV_LIMITS.maxBulkItems);

export const BulkGetSchema = z.object({
  keys: z.array(z.string()).min(1).max(KV_LIMITS.maxBulkGet),
  type: z.enum(['text', 'json']).optional(),
  withMetadata: z.boolean().optional(),
});
