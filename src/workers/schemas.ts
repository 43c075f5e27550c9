import { z } from 'zod';
import { MigrationsSchema } from './durable-objects/schemas.ts';
import { UploadAssetsSchema } from './assets/schemas.ts';
import { DEFAULT_CPU_MS, ModuleTypes, type Binding, type ModuleType, type WorkerModule } from '../workerd/index.ts';

// What a script is made of is what the runtime can run: the engine declares it (src/workerd/script.ts).
export { DEFAULT_CPU_MS, ModuleTypes, type Binding, type ModuleType, type WorkerModule };
/** The highest `limits.cpu_ms` Cloudflare accepts: 5 minutes. */
export const MAX_CPU_MS = 300_000;

/** JavaScript identifiers: what `env.<NAME>` can name (bindings and secrets). */
/** `limits` as wrangler sends it from its config (`cpu_ms`, `subrequests`); only cpu_ms is enforced. */
const LimitsSchema = z
  .object({
    cpu_ms: z
      .number()
      .int('limits.cpu_ms must be a whole number of milliseconds')
      .min(1, 'limits.cpu_ms must be at least 1')
      .max(MAX_CPU_MS, `limits.cpu_ms may be at most ${MAX_CPU_MS} (5 minutes), as on Cloudflare`)
      .optional(),
  })
  .loose();

export const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** A script name doubles as the first label of its hostname, so it must be a DNS label. */
export const SCRIPT_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const SUBDOMAIN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The `metadata` part of a script or version upload, as wrangler and the API docs send it. */
export const UploadMetadataSchema = z
  .object({
    main_module: z.string().min(1).optional(),
    body_part: z.string().optional(),
    bindings: z.array(z.object({ name: z.string(), type: z.string() }).loose()).default([]),
    compatibility_date: z.string().optional(),
    compatibility_flags: z.array(z.string()).default([]),
    keep_bindings: z.array(z.string()).default([]),
    logpush: z.boolean().optional(),
    tags: z.array(z.string()).optional(),
    annotations: z.record(z.string(), z.unknown()).optional(),
    /** wrangler sends `limits` from its config as is (`cpu_ms`, `subrequests`); only cpu_ms is enforced. */
    limits: LimitsSchema.optional(),
    /** Static assets: the completion token of an upload session and how to serve them (assets/schemas.ts). */
    assets: UploadAssetsSchema.optional(),
    /** Keep the previous version's assets (wrangler sends it when the assets did not change, e.g. versions upload). */
    keep_assets: z.boolean().optional(),
    /** Durable Object migrations: the script's current tag, its new one, and the steps between (durable-objects/). */
    migrations: MigrationsSchema.optional(),
  })
  .loose();
export type UploadMetadata = z.infer<typeof UploadMetadataSchema>;

export const SecretPutSchema = z.object({
  name: z.string(),
  text: z.string(),
  type: z.literal('secret_text').default('secret_text'),
});

export const DeploymentCreateSchema = z.object({
  strategy: z.literal('percentage').default('percentage'),
  versions: z.array(z.object({ version_id: z.string(), percentage: z.number() })).min(1),
  annotations: z.record(z.string(), z.unknown()).optional(),
});

export const ScriptSubdomainSchema = z.object({
  enabled: z.boolean(),
  previews_enabled: z.boolean().optional(),
});

export const AccountSubdomainSchema = z.object({ subdomain: z.string() });

export const ScriptSettingsPatchSchema = z
  .object({
    logpush: z.boolean().optional(),
    observability: z.record(z.string(), z.unknown()).nullable().optional(),
    tags: z.array(z.string()).nullable().optional(),
    tail_consumers: z.array(z.unknown()).nullable().optional(),
  })
  .loose();

/** `PATCH .../secrets-bulk` (a JSON merge patch, RFC 7396): a secret object sets, null deletes. */
export const SecretsBulkSchema = z.object({
  secrets: z
    .record(
      z.string(),
      z.object({ name: z.string(), type: z.string(), text: z.string().optional() }).loose().nullable(),
    )
    .default({}),
  version_tags: z.record(z.string(), z.unknown()).optional(),
});
export type SecretsBulk = z.infer<typeof SecretsBulkSchema>;

/** The `settings` part of `PATCH .../scripts/{script}/settings`: what a new version changes. */
export const ScriptAndVersionSettingsSchema = z
  .object({
    bindings: z.array(z.object({ name: z.string(), type: z.string() }).loose()).optional(),
    compatibility_date: z.string().optional(),
    compatibility_flags: z.array(z.string()).optional(),
    annotations: z.record(z.string(), z.unknown()).optional(),
    logpush: z.boolean().optional(),
    observability: z.record(z.string(), z.unknown()).nullable().optional(),
    tags: z.array(z.string()).nullable().optional(),
    tail_consumers: z.array(z.unknown()).nullable().optional(),
    limits: LimitsSchema.optional(),
  })
  .loose();
export type ScriptAndVersionSettings = z.infer<typeof ScriptAndVersionSettingsSchema>;
