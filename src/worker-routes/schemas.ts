import { z } from 'zod';

/** Body of POST and PUT /zones/{zone_id}/workers/routes[/{id}] (the SDK's RouteCreateParams). */
export const RouteBodySchema = z.object({
  pattern: z.string({ error: 'pattern is required and must be a string' }),
  // Without a script the route sends matching requests past Workers routes (it negates less specific ones).
  script: z.string({ error: 'script must be a string' }).nullable().optional(),
});

/** Cloudflare's limit of routes in a zone; a script's list cannot be longer. */
export const MAX_ROUTES = 1000;

/** Body of PUT /accounts/{a}/workers/scripts/{script}/routes: what `wrangler deploy` sends. */
export const ScriptRoutesSchema = z
  .array(
    z.object({
      pattern: z.string({ error: 'pattern is required and must be a string' }),
      zone_id: z.string().optional(),
      zone_name: z.string().optional(),
    }),
    { error: 'the body is an array of routes ({ pattern, zone_id | zone_name })' },
  )
  .max(MAX_ROUTES, `at most ${MAX_ROUTES} routes`);

/** Body of PUT /accounts/{a}/workers/domains (the SDK's DomainUpdateParams). */
export const DomainBodySchema = z.object({
  hostname: z.string({ error: 'hostname is required and must be a string' }),
  service: z.string({ error: 'service is required and must be a string' }),
  environment: z.string().optional(),
  zone_id: z.string().optional(),
  zone_name: z.string().optional(),
});

/** One origin of wrangler's Custom Domain changeset and records calls. */
const OriginSchema = z.object({
  hostname: z.string({ error: 'hostname is required and must be a string' }),
  zone_id: z.string().optional(),
  zone_name: z.string().optional(),
  enabled: z.boolean().optional(),
  previews_enabled: z.boolean().optional(),
});
export type DomainOrigin = z.infer<typeof OriginSchema>;

export const ChangesetSchema = z.array(OriginSchema).max(MAX_ROUTES, `at most ${MAX_ROUTES} domains`);

/** PUT /accounts/{a}/workers/scripts/{script}/domains/records: `wrangler deploy` with `custom_domain = true`. */
export const DomainRecordsSchema = z.object({
  override_scope: z.boolean().optional(),
  override_existing_origin: z.boolean().optional(),
  override_existing_dns_record: z.boolean().optional(),
  origins: z.array(OriginSchema).max(MAX_ROUTES, `at most ${MAX_ROUTES} domains`),
});
